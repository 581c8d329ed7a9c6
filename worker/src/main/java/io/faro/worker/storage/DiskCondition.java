package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The health of one {@link Disk}: what its last check or a failed write found, corrected between
 * checks for the bytes written since and for a check that hangs; the check itself (a small file
 * written, forced and deleted, the usable bytes against the tier's reserve); and the reasons an
 * operator reads. Read by every append ({@link #state}) and every heartbeat; logs as the disk.
 */
final class DiskCondition {
  private static final Logger LOG = LoggerFactory.getLogger(Disk.class);

  private final Disk disk;
  private volatile DiskHealth health = DiskHealth.UNCHECKED;
  private volatile long checkStarted;
  private volatile long checkTimeoutNanos = Long.MAX_VALUE;
  private volatile boolean hungLogged;
  private volatile long usedAtCheck;
  private volatile long reserveBytes;
  private final AtomicLong writeFailures = new AtomicLong();
  private volatile Runnable afterWriteFailure = () -> {};

  DiskCondition(Disk disk) {
    this.disk = requireNonNull(disk, "disk is null");
  }

  /** The reserve the last check applied (that of the disk's tier): below it the disk is full. */
  long reserveBytes() {
    return reserveBytes;
  }

  /**
   * What the last check or failed write found, with two corrections between checks: full once the
   * bytes written since the last check leave less than the reserve (a fast disk can write a
   * reserve's worth between two checks), and broken while a check has been running for longer than
   * its timeout (a hung disk hangs its check).
   */
  DiskHealth health() {
    long started = checkStarted;
    if (checkHung(started)) {
      DiskHealth hung =
          DiskHealth.broken(
              "its check has not finished for "
                  + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)
                  + " s");
      if (!hungLogged) {
        hungLogged = true;
        LOG.warn("{} is {}: its partitions move to other disks", disk, hung.describe());
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
  DiskHealth.State state() {
    if (checkHung(checkStarted)) {
      return DiskHealth.State.BROKEN;
    }
    DiskHealth last = health;
    return usableSinceCheck(last) < reserveBytes ? DiskHealth.State.FULL : last.state();
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
    return last.usableBytes() - Math.max(0, disk.usedBytes() - usedAtCheck);
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
  DiskHealth check(long reserveBytes) {
    long failuresBefore = writeFailures.get();
    checkStarted = System.nanoTime() | 1;
    DiskHealth result;
    long usedBefore = disk.usedBytes();
    try {
      if (!Files.isDirectory(disk.root())) {
        // Says what is wrong, rather than the probe's "Not a directory" or "NoSuchFileException".
        throw new IOException(whyNotAWritableDirectory(disk.root()));
      }
      Path probe = disk.root().resolve(Disk.CHECK_FILE);
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
      long usable = disk.usableBytes();
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
                      + (disk.dir().capacityBytes() == Long.MAX_VALUE
                          ? ""
                          : "; Faro's files take "
                              + disk.usedBytes()
                              + " of the configured capacity "
                              + disk.dir().capacityBytes()))
              : new DiskHealth(DiskHealth.State.HEALTHY, usable, "");
    } catch (IOException | RuntimeException e) {
      result =
          DiskHealth.broken(
              "the check could not write to "
                  + disk.root()
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
  void writeFailed(String reason) {
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
        LOG.info("{} is healthy again ({} bytes usable)", disk, next.usableBytes());
      } else {
        LOG.warn("{} is {}: its partitions move to other disks", disk, next.describe());
      }
    }
  }

  /** The key of the reserve of this disk's tier, for messages. */
  private String reserveKey() {
    return "faro.worker.tier." + disk.tier().configName() + ".reserve";
  }
}
