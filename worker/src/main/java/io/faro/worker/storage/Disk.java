package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One disk of this worker: its position in {@code faro.worker.dirs}, directory, tier, flusher,
 * and, when it does direct I/O, its reader; and its health: the bytes Faro's files take on it,
 * and what the last check ({@link #check}, run by the {@link DiskChecker}) or a failed write
 * found.
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

  Disk(int index, DiskDir dir, DiskFlusher flusher, DirectIo direct, DiskReader reader) {
    this.index = index;
    this.dir = requireNonNull(dir, "dir is null");
    this.flusher = requireNonNull(flusher, "flusher is null");
    if ((direct == null) != (reader == null)) {
      throw new IllegalArgumentException("a disk with direct I/O needs a reader, and only then");
    }
    this.direct = direct;
    this.reader = reader;
  }

  public int index() {
    return index;
  }

  public Path root() {
    return dir.path();
  }

  public DiskTier tier() {
    return dir.tier();
  }

  public DiskFlusher flusher() {
    return flusher;
  }

  /** The reader of a disk with direct I/O; empty for one written through the page cache. */
  public Optional<DiskReader> reader() {
    return Optional.ofNullable(reader);
  }

  public IoMode ioMode() {
    return direct == null ? IoMode.BUFFERED : IoMode.DIRECT;
  }

  public PartitionFile newPartitionFile(PartitionKey key) {
    return new PartitionFile(key, FileLayout.partitionFile(root(), key), direct, this::used);
  }

  /** Counts {@code delta} bytes more (or, negative, fewer) of Faro's files on this disk. */
  void used(long delta) {
    usedBytes.accumulateAndGet(delta, (a, b) -> Math.max(0, a + b));
  }

  /** Bytes of Faro's files on this disk, as counted. */
  public long usedBytes() {
    return usedBytes.get();
  }

  /**
   * Bytes the worker may still write here: the file system's free space for this process,
   * bounded by what the disk's configured capacity leaves. A blocking call: not for event loops.
   */
  public long usableBytes() throws IOException {
    long free = Files.getFileStore(root()).getUsableSpace();
    return dir.capacityBytes() == Long.MAX_VALUE ? free : Math.min(free, Math.max(0, dir.capacityBytes() - usedBytes()));
  }

  /**
   * What the last check or failed write found; broken, too, while a check has been running for
   * longer than its timeout (a hung disk hangs its check).
   */
  public DiskHealth health() {
    long started = checkStarted;
    if (started != 0 && System.nanoTime() - started > checkTimeoutNanos) {
      return DiskHealth.broken("its check has not finished for "
          + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + " s");
    }
    return health;
  }

  /** Whether the disk takes new partitions and data: healthy as far as is known. */
  public boolean accepting() {
    return health().healthy();
  }

  void checkTimeout(long nanos) {
    checkTimeoutNanos = nanos;
  }

  /**
   * Checks the disk: writes, forces and deletes a small file in its directory, then compares
   * its usable bytes with {@code reserveBytes}. Broken if the file cannot be written, full if
   * fewer than {@code reserveBytes} are usable, healthy otherwise. A blocking call.
   */
  public DiskHealth check(long reserveBytes) {
    checkStarted = System.nanoTime() | 1;
    DiskHealth result;
    try {
      Path probe = root().resolve(CHECK_FILE);
      try (FileChannel channel = FileChannel.open(probe, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
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
      result = usable < reserveBytes
          ? new DiskHealth(DiskHealth.State.FULL, usable, usable + " bytes usable, below the reserve of "
              + reserveBytes + " (faro.worker.disk.reserve)"
              + (dir.capacityBytes() == Long.MAX_VALUE ? "" : "; Faro's files take " + usedBytes()
                  + " of the configured capacity " + dir.capacityBytes()))
          : new DiskHealth(DiskHealth.State.HEALTHY, usable, "");
    } catch (IOException | RuntimeException e) {
      result = DiskHealth.broken("the check could not write to " + root() + ": " + e);
    } finally {
      checkStarted = 0;
    }
    setHealth(result);
    return result;
  }

  /** A write to a file of this disk failed: broken until a check finds otherwise. */
  public void writeFailed(String reason) {
    setHealth(DiskHealth.broken("a write failed: " + reason));
  }

  private synchronized void setHealth(DiskHealth next) {
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

  /** Size of the file system. A blocking call: not for event loops. */
  public long capacityBytes() throws IOException {
    return Files.getFileStore(root()).getTotalSpace();
  }

  @Override
  public String toString() {
    return "disk " + index + " (" + dir + ", " + ioMode().name().toLowerCase(java.util.Locale.ROOT) + " I/O)";
  }
}
