package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Checks every disk of the worker at a fixed interval, on one thread of its own: each check
 * writes, forces and deletes a small file and compares the usable bytes with the reserve (see
 * {@link Disk#check}). A disk whose check hangs (a dying drive) is reported broken once the check
 * has run for longer than the timeout, by {@link Disk#health} itself; the other disks' checks
 * wait behind it and keep their last result.
 */
public final class DiskChecker implements AutoCloseable {
  /**
   * @param reserveBytes usable bytes below which a disk is full
   * @param interval time between two checks of every disk
   * @param timeout how long a check may run before its disk counts as broken
   */
  public record Settings(long reserveBytes, Duration interval, Duration timeout) {
    public Settings {
      requireNonNull(interval, "interval is null");
      requireNonNull(timeout, "timeout is null");
      if (reserveBytes < 0 || interval.isNegative() || interval.isZero() || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("bad disk check settings: reserve " + reserveBytes + ", interval "
            + interval + ", timeout " + timeout);
      }
    }
  }

  private final Disks disks;
  private final Settings settings;
  private final ScheduledThreadPoolExecutor thread;

  public DiskChecker(Disks disks, Settings settings, String threadName) {
    this.disks = requireNonNull(disks, "disks is null");
    this.settings = requireNonNull(settings, "settings is null");
    disks.all().forEach(d -> d.checkTimeout(settings.timeout().toNanos()));
    this.thread = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory(threadName, true));
  }

  /** Checks every disk once, on the calling thread, then every interval in the background. */
  public void start() {
    checkAll();
    long interval = settings.interval().toNanos();
    thread.scheduleWithFixedDelay(this::checkAll, interval, interval, TimeUnit.NANOSECONDS);
  }

  /** Checks every disk now, on the calling thread. */
  public void checkAll() {
    for (Disk disk : disks.all()) {
      disk.check(settings.reserveBytes());
    }
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }
}
