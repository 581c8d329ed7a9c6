package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks every disk of the worker at a fixed interval (see {@link Disk#check}: write, force and
 * delete a small file, compare the usable bytes with the reserve), each disk on its own schedule in
 * a pool of one thread per disk, so that a disk whose check hangs (a dying drive) holds one thread
 * and the others go on being checked. The hung disk is reported broken by {@link Disk#health}
 * itself once its check has run for longer than the timeout. A failed write asks for a check of its
 * disk at once: the disk, broken since the failure, is healthy again if the check passes (the
 * failure was one file's) and stays broken otherwise.
 */
public final class DiskChecker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskChecker.class);

  /**
   * @param reserveBytes usable bytes below which a disk of each tier is full
   * @param interval time between two checks of a disk
   * @param timeout how long a check may run before its disk counts as broken
   */
  public record Settings(Map<DiskTier, Long> reserveBytes, Duration interval, Duration timeout) {
    public Settings {
      requireNonNull(interval, "interval is null");
      requireNonNull(timeout, "timeout is null");
      reserveBytes = Map.copyOf(reserveBytes);
      boolean reservesOk = true;
      for (DiskTier tier : DiskTier.values()) {
        Long reserve = reserveBytes.get(tier);
        reservesOk &= reserve != null && reserve >= 0;
      }
      if (!reservesOk
          || interval.isNegative()
          || interval.isZero()
          || timeout.isNegative()
          || timeout.isZero()) {
        throw new IllegalArgumentException(
            "bad disk check settings: reserves "
                + reserveBytes
                + ", interval "
                + interval
                + ", timeout "
                + timeout);
      }
    }

    /** The usable bytes below which a disk of {@code tier} is full. */
    public long reserve(DiskTier tier) {
      return reserveBytes.get(tier);
    }
  }

  private final Disks disks;
  private final Settings settings;
  private final ScheduledThreadPoolExecutor threads;
  // Per disk index: whether a check of it runs now.
  private final List<AtomicBoolean> checking = new ArrayList<>();
  // Per disk index: whether another check was asked for while one ran.
  private final List<AtomicBoolean> again = new ArrayList<>();

  public DiskChecker(Disks disks, Settings settings, String threadPrefix) {
    this.disks = requireNonNull(disks, "disks is null");
    this.settings = requireNonNull(settings, "settings is null");
    disks.all().forEach(d -> d.checkTimeout(settings.timeout().toNanos()));
    disks.all().forEach(d -> checking.add(new AtomicBoolean()));
    disks.all().forEach(d -> again.add(new AtomicBoolean()));
    this.threads =
        new ScheduledThreadPoolExecutor(
            Math.max(1, disks.size()), new DefaultThreadFactory(threadPrefix, true));
    disks.all().forEach(d -> d.afterWriteFailure(() -> checkSoon(d)));
  }

  /** Checks {@code disk} as soon as a thread is free, or right after the check that runs now. */
  void checkSoon(Disk disk) {
    again.get(disk.index()).set(true);
    try {
      threads.execute(() -> check(disk));
    } catch (RejectedExecutionException e) {
      // Closed: the worker is stopping.
    }
  }

  /**
   * Checks every disk once and waits for those checks, each at most the timeout (a disk whose first
   * check hangs is broken from the start); then checks each disk every interval.
   */
  public void start() {
    List<CompletableFuture<Void>> first = new ArrayList<>();
    for (Disk disk : disks.all()) {
      first.add(CompletableFuture.runAsync(() -> check(disk), threads));
    }
    long deadline = System.nanoTime() + settings.timeout().toNanos();
    for (int i = 0; i < first.size(); i++) {
      try {
        first.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        LOG.warn(
            "The first check of {} has not finished within {}: it counts as broken",
            disks.get(i),
            settings.timeout());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (ExecutionException e) {
        // check() logs and swallows everything: not reached.
      }
    }
    long interval = settings.interval().toNanos();
    for (Disk disk : disks.all()) {
      threads.scheduleWithFixedDelay(() -> check(disk), interval, interval, TimeUnit.NANOSECONDS);
    }
  }

  /** Checks every disk now, on the calling thread. */
  public void checkAll() {
    disks.all().forEach(this::check);
  }

  private void check(Disk disk) {
    AtomicBoolean running = checking.get(disk.index());
    AtomicBoolean askedAgain = again.get(disk.index());
    // A hung check holds its thread; the next one of that disk must not take another thread. A
    // check asked for meanwhile runs when this one ends (the loop below).
    while (running.compareAndSet(false, true)) {
      askedAgain.set(false);
      try {
        disk.check(settings.reserve(disk.tier()));
      } catch (Throwable t) {
        // Whatever it is, the next check must still run: a thrown task would cancel its schedule.
        LOG.error("Checking {} failed unexpectedly", disk, t);
      } finally {
        running.set(false);
      }
      if (!askedAgain.get() || threads.isShutdown()) {
        return;
      }
    }
  }

  @Override
  public void close() {
    threads.shutdownNow();
  }
}
