package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
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
 * <p>Its health (checks, write failures, the reserve) is {@link DiskCondition}'s, read by every
 * append and every heartbeat; the write delay a worker extension may ask for (tests slow a disk
 * down with it) is a dozen lines here.
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
  // When the running check started (System.nanoTime, never 0), or 0 when none runs.
  // Of the last check: Faro's bytes on the disk when it began, and the reserve it applied.
  private final DiskTimes times = new DiskTimes();
  private final DiskCondition condition = new DiskCondition(this);
  // Asked at each check for the nanoseconds each MiB written takes longer from then on (a worker
  // extension's slow-down, see WorkerExtensions); null, the default: no delay, nothing asked.
  private volatile LongSupplier writeDelayProbe;
  private volatile long writeDelayNanosPerMiB;
  // What the last heartbeat reported of this disk's recent times (ms per MiB; 0: unknown).
  private volatile double reportedFlushMsPerMiB;
  private volatile double reportedReadMsPerMiB;
  // Told of every failed write, so that a check soon tells a broken disk from one failed file.
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
    return condition.reserveBytes();
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
   * What the last check or failed write found, corrected between checks (see {@link
   * DiskCondition#health}).
   */
  public DiskHealth health() {
    return condition.health();
  }

  /** The state {@link #health()} would report, without building its reason: for every append. */
  public DiskHealth.State state() {
    return condition.state();
  }

  /** Whether the disk takes new partitions and data: healthy as far as is known. */
  public boolean accepting() {
    return state() == DiskHealth.State.HEALTHY;
  }

  void checkTimeout(long nanos) {
    condition.checkTimeout(nanos);
  }

  /**
   * Checks the disk (see {@link DiskCondition#check}); first reads the write delay a worker
   * extension asks for, if any. A blocking call.
   */
  public DiskHealth check(long reserveBytes) {
    LongSupplier delayProbe = writeDelayProbe;
    if (delayProbe != null) {
      writeDelayNanosPerMiB = Math.max(0, delayProbe.getAsLong());
    }
    return condition.check(reserveBytes);
  }

  /**
   * Its directory could not be created at start: broken, for {@code reason}, until a check passes.
   */
  void openFailed(String reason) {
    condition.openFailed(reason);
  }

  /**
   * A write to a file of this disk failed (a flush, an index, a sync): broken until a check finds
   * otherwise, and a check is asked for now (see {@link DiskCondition#writeFailed}).
   */
  public void writeFailed(String reason) {
    condition.writeFailed(reason);
  }

  /** What to run after each failed write (the checker's request for a check of this disk). */
  void afterWriteFailure(Runnable action) {
    condition.afterWriteFailure(action);
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
