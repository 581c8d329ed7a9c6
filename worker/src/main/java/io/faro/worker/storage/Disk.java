package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One disk of this worker: its position in {@code faro.worker.dirs}, directory, tier, flusher and
 * reader (direct I/O or the page cache, as its writes); and its health: the bytes Faro's files take
 * on it, and what the last check ({@link #check}, run by the {@link DiskChecker}) or a failed write
 * found.
 *
 * <p>Over 400 lines, knowingly: the disk's health (checks, write failures, the reserve), the bytes
 * counted on it and its timings are read together by every append and every heartbeat, under the
 * same few volatile fields; the write delay a worker extension may ask for (tests slow a disk down
 * with it) is a dozen lines of it.
 */
public final class Disk {
  /** The file a check writes, forces and deletes in the disk's directory. */
  static final String CHECK_FILE = ".faro-disk-check";

  private static final Logger LOG = LoggerFactory.getLogger(Disk.class);

  private final int index;
  private final DiskDir dir;
  private final DiskFlusher flusher;
  private final DirectIo direct;
  private final DiskReader reader;
  // Bytes of Faro's files on this disk: found at start, then counted as files grow and go.
  private final AtomicLong usedBytes = new AtomicLong();
  private volatile DiskHealth health = DiskHealth.UNCHECKED;
  // When the running check started (System.nanoTime, never 0), or 0 when none runs.
  private volatile long checkStarted;
  private volatile long checkTimeoutNanos = Long.MAX_VALUE;
  private volatile boolean hungLogged;
  // Of the last check: Faro's bytes on the disk when it began, and the reserve it applied.
  private volatile long usedAtCheck;
  private volatile long reserveBytes;
  private final AtomicLong writeFailures = new AtomicLong();
  private final DiskTimes times = new DiskTimes();
  // Asked at each check for the nanoseconds each MiB written takes longer from then on (a worker
  // extension's slow-down, see WorkerExtensions); null, the default: no delay, nothing asked.
  private volatile LongSupplier writeDelayProbe;
  private volatile long writeDelayNanosPerMiB;
  // What the last heartbeat reported of this disk's recent times (ms per MiB; 0: unknown).
  private volatile double reportedFlushMsPerMiB;
  private volatile double reportedReadMsPerMiB;
  // Told of every failed write, so that a check soon tells a broken disk from one failed file.
  private volatile Runnable afterWriteFailure = () -> {};
  // Told the time of every write to a partition file (metrics); nothing until set.
  private volatile LongConsumer writeObserver = nanos -> {};

  private final Layout layout;
  // Runs written on this disk since start (runs layout).
  private final AtomicLong runsWritten = new AtomicLong();

  Disk(
      int index,
      DiskDir dir,
      DiskFlusher flusher,
      DirectIo direct,
      DiskReader reader,
      Layout layout) {
    this.index = index;
    this.layout = requireNonNull(layout, "layout is null");
    this.dir = requireNonNull(dir, "dir is null");
    this.flusher = requireNonNull(flusher, "flusher is null");
    this.direct = direct;
    this.reader = requireNonNull(reader, "reader is null");
  }

  public int index() {
    return index;
  }

  public Path root() {
    return dir.path();
  }

  /** The disk as configured in faro.worker.dirs. */
  public DiskDir dir() {
    return dir;
  }

  public DiskTier tier() {
    return dir.tier();
  }

  public DiskFlusher flusher() {
    return flusher;
  }

  /** Reads chunks for fetches: with direct I/O, or through the page cache like the writes. */
  public DiskReader reader() {
    return reader;
  }

  public IoMode ioMode() {
    return direct == null ? IoMode.BUFFERED : IoMode.DIRECT;
  }

  /** A run was written here (runs layout). */
  public void runWritten() {
    runsWritten.incrementAndGet();
  }

  /** Runs written here since start. */
  public long runsWritten() {
    return runsWritten.get();
  }

  /** How this disk lays out partition data (faro.worker.tier.TIER.layout). */
  public Layout layout() {
    return layout;
  }

  public PartitionFile newPartitionFile(PartitionKey key) {
    return new PartitionFile(key, FileLayout.partitionFile(root(), key), direct, accounting());
  }

  /**
   * Counts what a file of this disk adds (its bytes against the disk's capacity, its write times
   * for the disk's load and metrics).
   */
  public FileAccounting accounting() {
    return new FileAccounting() {
      @Override
      public void used(long delta) {
        Disk.this.used(delta);
      }

      @Override
      public void wrote(long bytes, long nanos) {
        long took = nanos + sleepWriteDelay(bytes);
        times.wrote(bytes, took);
        writeObserver.accept(took);
      }
    };
  }

  /**
   * What this disk wrote and read since start, and how long it took: {@code {writtenBytes,
   * writeNanos, readBytes, readNanos}}.
   */
  public long[] ioTimes() {
    return new long[] {
      times.writtenBytes(), times.writeNanos(), reader.readBytes(), reader.readNanos()
    };
  }

  /** Tells {@code observer} the nanoseconds of every later write to a partition file here. */
  public void onWrite(LongConsumer observer) {
    writeObserver = Objects.requireNonNull(observer, "observer is null");
  }

  /** Keeps what the heartbeat reported of this disk's recent times, for the status RPC. */
  public void reported(double flushMsPerMiB, double readMsPerMiB) {
    reportedFlushMsPerMiB = flushMsPerMiB;
    reportedReadMsPerMiB = readMsPerMiB;
  }

  /** The recent write time per MiB the last heartbeat reported; 0 when unknown. */
  public double reportedFlushMsPerMiB() {
    return reportedFlushMsPerMiB;
  }

  /** The recent read time per MiB the last heartbeat reported; 0 when unknown. */
  public double reportedReadMsPerMiB() {
    return reportedReadMsPerMiB;
  }

  /**
   * Asks {@code nanosPerMiB} at each check (on the checker's thread) how many nanoseconds each MiB
   * written here takes longer from then on: the slow-down a worker extension may ask for (see
   * io.faro.worker.extension.WorkerExtension), for tests. Null, the default, asks nothing.
   */
  public void writeDelay(LongSupplier nanosPerMiB) {
    writeDelayProbe = nanosPerMiB;
    if (nanosPerMiB == null) {
      writeDelayNanosPerMiB = 0;
    }
  }

  /** Sleeps the write delay of a write of {@code bytes}, if any; returns the nanoseconds slept. */
  private long sleepWriteDelay(long bytes) {
    long perMiB = writeDelayNanosPerMiB;
    if (perMiB == 0) {
      return 0;
    }
    long nanos = (long) ((double) perMiB * bytes / (1 << 20));
    long start = System.nanoTime();
    LockSupport.parkNanos(nanos);
    return System.nanoTime() - start;
  }

  // Partition files of an earlier run, found at open, until Disks.deleteLeftovers takes them.
  private volatile List<Path> leftovers = List.of();

  void leftovers(List<Path> files) {
    leftovers = List.copyOf(files);
  }

  /** Partition files of an earlier run found at open and not deleted yet. */
  public List<Path> leftoverFiles() {
    return leftovers;
  }

  List<Path> takeLeftovers() {
    List<Path> files = leftovers;
    leftovers = List.of();
    return files;
  }

  /**
   * Deletes {@code file}, one of this disk's partition files, and counts its bytes gone. A file
   * that cannot be deleted is logged; it is found again as a leftover at the next start. A blocking
   * call: for the disk's flusher.
   */
  public void deleteFile(Path file) {
    try {
      long size = Files.size(file);
      if (Files.deleteIfExists(file)) {
        used(-size);
      }
    } catch (NoSuchFileException e) {
      // Gone already.
    } catch (IOException e) {
      LOG.warn("Cannot delete {} of {}: {}", file, this, e.toString());
    }
  }

  /** Counts {@code delta} bytes more (or, negative, fewer) of Faro's files on this disk. */
  void used(long delta) {
    usedBytes.accumulateAndGet(delta, (a, b) -> Math.max(0, a + b));
  }

  /** The reserve the last check applied (that of the disk's tier): below it the disk is full. */
  public long reserveBytes() {
    return reserveBytes;
  }

  /** Bytes of Faro's files on this disk, as counted. */
  public long usedBytes() {
    return usedBytes.get();
  }

  /**
   * Bytes the worker may still write here: the file system's free space for this process, bounded
   * by what the disk's configured capacity leaves. A blocking call: not for event loops.
   */
  public long usableBytes() throws IOException {
    long free = Files.getFileStore(root()).getUsableSpace();
    return dir.capacityBytes() == Long.MAX_VALUE
        ? free
        : Math.min(free, Math.max(0, dir.capacityBytes() - usedBytes()));
  }

  /**
   * What the last check or failed write found, with two corrections between checks: full once the
   * bytes written since the last check leave less than the reserve (a fast disk can write a
   * reserve's worth between two checks), and broken while a check has been running for longer than
   * its timeout (a hung disk hangs its check).
   */
  public DiskHealth health() {
    long started = checkStarted;
    if (checkHung(started)) {
      DiskHealth hung =
          DiskHealth.broken(
              "its check has not finished for "
                  + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)
                  + " s");
      if (!hungLogged) {
        hungLogged = true;
        LOG.warn("{} is {}: its partitions move to other disks", this, hung.describe());
      }
      return hung;
    }
    DiskHealth last = health;
    long left = usableSinceCheck(last);
    if (left < reserveBytes) {
      return new DiskHealth(
          DiskHealth.State.FULL,
          Math.max(0, left),
          "about "
              + Math.max(0, left)
              + " bytes usable since the last check, below the reserve of "
              + reserveBytes
              + " ("
              + reserveKey()
              + ")");
    }
    return last;
  }

  /** The state {@link #health()} would report, without building its reason: for every append. */
  public DiskHealth.State state() {
    if (checkHung(checkStarted)) {
      return DiskHealth.State.BROKEN;
    }
    DiskHealth last = health;
    return usableSinceCheck(last) < reserveBytes ? DiskHealth.State.FULL : last.state();
  }

  /** Whether the disk takes new partitions and data: healthy as far as is known. */
  public boolean accepting() {
    return state() == DiskHealth.State.HEALTHY;
  }

  private boolean checkHung(long started) {
    return started != 0 && System.nanoTime() - started > checkTimeoutNanos;
  }

  /**
   * For a disk the last check found healthy: the usable bytes it found less what was written since.
   * Long.MAX_VALUE otherwise (unchecked, full or broken: nothing to correct).
   */
  private long usableSinceCheck(DiskHealth last) {
    if (!last.healthy() || last == DiskHealth.UNCHECKED) {
      return Long.MAX_VALUE;
    }
    return last.usableBytes() - Math.max(0, usedBytes() - usedAtCheck);
  }

  void checkTimeout(long nanos) {
    checkTimeoutNanos = nanos;
  }

  /**
   * Checks the disk: writes, forces and deletes a small file in its directory, then compares its
   * usable bytes with {@code reserveBytes}. Broken if the file cannot be written, full if fewer
   * than {@code reserveBytes} are usable, healthy otherwise. A write that failed while the check
   * ran keeps the disk broken until the next check. A blocking call.
   */
  public DiskHealth check(long reserveBytes) {
    long failuresBefore = writeFailures.get();
    LongSupplier delayProbe = writeDelayProbe;
    if (delayProbe != null) {
      writeDelayNanosPerMiB = Math.max(0, delayProbe.getAsLong());
    }
    checkStarted = System.nanoTime() | 1;
    DiskHealth result;
    long usedBefore = usedBytes();
    try {
      if (!Files.isDirectory(root())) {
        // Says what is wrong, rather than the probe's "Not a directory" or "NoSuchFileException".
        throw new IOException(whyNotAWritableDirectory(root()));
      }
      Path probe = root().resolve(CHECK_FILE);
      try (FileChannel channel =
          FileChannel.open(
              probe,
              StandardOpenOption.CREATE,
              StandardOpenOption.WRITE,
              StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer block = ByteBuffer.allocate(4096);
        while (block.hasRemaining()) {
          channel.write(block);
        }
        channel.force(true);
      } finally {
        Files.deleteIfExists(probe);
      }
      long usable = usableBytes();
      result =
          usable < reserveBytes
              ? new DiskHealth(
                  DiskHealth.State.FULL,
                  usable,
                  usable
                      + " bytes usable, below the reserve of "
                      + reserveBytes
                      + " ("
                      + reserveKey()
                      + ")"
                      + (dir.capacityBytes() == Long.MAX_VALUE
                          ? ""
                          : "; Faro's files take "
                              + usedBytes()
                              + " of the configured capacity "
                              + dir.capacityBytes()))
              : new DiskHealth(DiskHealth.State.HEALTHY, usable, "");
    } catch (IOException | RuntimeException e) {
      result =
          DiskHealth.broken(
              "the check could not write to "
                  + root()
                  + ": "
                  + (e.getClass() == IOException.class ? e.getMessage() : e.toString()));
    } finally {
      checkStarted = 0;
      hungLogged = false;
    }
    synchronized (this) {
      if (writeFailures.get() != failuresBefore) {
        return health; // a write failed meanwhile: that outlives this check's result
      }
      // Bytes written while the check ran may not be in its figure: count them as written after.
      usedAtCheck = usedBefore;
      this.reserveBytes = reserveBytes;
      setHealth(result);
    }
    return result;
  }

  /**
   * Its directory could not be created at start: broken, for {@code reason}, until a check passes.
   */
  synchronized void openFailed(String reason) {
    setHealth(DiskHealth.broken(reason));
  }

  /**
   * Why {@code dir} is not a directory one can write in, in an operator's words: "X is a file, not
   * a directory" (for X itself or the first ancestor that exists), "X does not exist", or "X is not
   * writable"; empty when it is a writable directory.
   */
  static String whyNotAWritableDirectory(Path dir) {
    if (Files.isDirectory(dir)) {
      return Files.isWritable(dir) ? "" : dir + " is not writable by this process";
    }
    if (Files.exists(dir)) {
      return dir + " is a file, not a directory";
    }
    Path existing = dir.toAbsolutePath().getParent();
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing != null && !Files.isDirectory(existing)) {
      return existing + " is a file, not a directory";
    }
    if (existing != null && !Files.isWritable(existing)) {
      return dir + " does not exist and " + existing + " is not writable by this process";
    }
    return dir + " does not exist (is its disk mounted?)";
  }

  /**
   * A write to a file of this disk failed (a flush, an index, a sync): broken until a check finds
   * otherwise. The checker is asked to check now rather than at its next interval: a failure of one
   * file (a name too long, a directory deleted under it) then costs the disk the few milliseconds
   * of a check, and only a disk that fails the check stays broken.
   */
  public void writeFailed(String reason) {
    synchronized (this) {
      writeFailures.incrementAndGet();
      setHealth(DiskHealth.broken("a write failed: " + reason));
    }
    afterWriteFailure.run();
  }

  /** What to run after each failed write (the checker's request for a check of this disk). */
  void afterWriteFailure(Runnable action) {
    afterWriteFailure = requireNonNull(action, "action is null");
  }

  // @GuardedBy("this")
  private void setHealth(DiskHealth next) {
    DiskHealth previous = health;
    health = next;
    if (previous.state() != next.state()) {
      if (next.healthy()) {
        LOG.info("{} is healthy again ({} bytes usable)", this, next.usableBytes());
      } else {
        LOG.warn("{} is {}: its partitions move to other disks", this, next.describe());
      }
    }
  }

  /** The key of the reserve of this disk's tier, for messages. */
  private String reserveKey() {
    return "faro.worker.tier." + tier().configName() + ".reserve";
  }

  /** Size of the file system. A blocking call: not for event loops. */
  public long capacityBytes() throws IOException {
    return Files.getFileStore(root()).getTotalSpace();
  }

  @Override
  public String toString() {
    return "disk " + index + " (" + dir + ", " + ioMode().name().toLowerCase(Locale.ROOT) + " I/O)";
  }
}
