package io.faro.worker.memory;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the bytes of pushed data held in partition buffers and flusher queues, and applies
 * back-pressure in two steps. Above the slow-down mark, halfway between the resume and the pause
 * marks, pushes are answered SLOW_DOWN, and map tasks narrow their window of unanswered pushes to
 * this worker before memory runs out (a paused connection reads no push, so an answer given only
 * while paused would come too late to matter). When the count reaches the pause mark every push
 * connection stops reading (autoRead off); when flushes bring it down to the resume mark they read
 * again. Overload slows pushes down; it never fails them.
 *
 * <p>Above the slow-down mark, and so on pausing, {@code relief} runs on {@code reliefExecutor}: it
 * hands every partition buffer to its flusher, since buffers below their flush size would otherwise
 * hold memory while pushes, slowed down, fill them slowly or not at all (many partitions of
 * half-full buffers could keep the count above the mark, and every task's window at one frame, for
 * good). It runs again every {@value #RELIEF_INTERVAL_MS} ms while above the mark or paused, for
 * data that was still being appended when it ran.
 *
 * <p>Thread-safety: {@link #reserve} and {@link #release} are lock-free on the fast path; the pause
 * state and the connection set are guarded by {@code lock}, taken only on transitions and when
 * connections open or close.
 */
public final class MemoryBudget {
  private static final Logger LOG = LoggerFactory.getLogger(MemoryBudget.class);
  static final long RELIEF_INTERVAL_MS = 100;

  private final long pauseAt;
  private final long resumeAt;
  private final long slowDownAt;
  private final Runnable relief;
  private final ScheduledExecutorService reliefExecutor;
  private final AtomicLong used = new AtomicLong();
  // Bytes of push frames still arriving (see partialFrames).
  private final AtomicLong partial = new AtomicLong();
  // The highest `used` so far, for status reports: a plain read per reserve, a CAS only on a new
  // high.
  private final AtomicLong peak = new AtomicLong();
  private final Object lock = new Object();
  // At most one relief loop at a time.
  private final AtomicBoolean reliefRunning = new AtomicBoolean();
  // @GuardedBy("lock"): pauses since start, their time, and when the current one began.
  private long pauses;
  private long pausedNanos;
  private long pausedSince;

  // Written under lock; read without it on the hot path (a stale read only delays a transition
  // until the next reserve or release, which rechecks under the lock).
  private volatile boolean paused;

  // @GuardedBy("lock")
  private final Set<Channel> pushChannels = new HashSet<>();

  public MemoryBudget(
      long pauseAt, long resumeAt, Runnable relief, ScheduledExecutorService reliefExecutor) {
    if (resumeAt >= pauseAt || resumeAt < 0) {
      throw new IllegalArgumentException(
          "resume mark " + resumeAt + " must be in [0, pause mark " + pauseAt + ")");
    }
    this.pauseAt = pauseAt;
    this.resumeAt = resumeAt;
    this.slowDownAt = resumeAt + (pauseAt - resumeAt) / 2;
    this.relief = requireNonNull(relief, "relief is null");
    this.reliefExecutor = requireNonNull(reliefExecutor, "reliefExecutor is null");
  }

  /** Counts {@code bytes} more held; pauses push connections at the pause mark. */
  public void reserve(long bytes) {
    long now = used.addAndGet(bytes);
    if (now > peak.get()) {
      peak.accumulateAndGet(now, Math::max);
    }
    if (now + partial.get() >= pauseAt && !paused) {
      pause();
    } else if (now > slowDownAt && !reliefRunning.get()) {
      startRelief();
    }
  }

  /** Counts {@code bytes} no longer held; resumes push connections at the resume mark. */
  public void release(long bytes) {
    long now = used.addAndGet(-bytes);
    if (now <= resumeAt && paused) {
      resume();
    }
  }

  /**
   * Counts the bytes of push frames still arriving (a push port's decoders call it): they count
   * towards the pause mark, so connections that half-send huge frames pause reading like any other
   * data instead of pinning memory outside the budget; their bytes go when the frame is whole (its
   * parts are then charged by their {@link FrameCharge}) or the connection closes (one that stalls
   * mid-frame closes after faro.network.request.timeout). They do not hold the resume mark: paused
   * connections keep their half-received frames, and only flushes bring the rest down.
   */
  public void partialFrames(long delta) {
    long held = partial.addAndGet(delta);
    if (delta > 0 && used.get() + held >= pauseAt && !paused) {
      pause();
    }
  }

  public long used() {
    return used.get();
  }

  /** The most bytes held at once since this budget was created. */
  public long peak() {
    return peak.get();
  }

  /** The pause mark in bytes. */
  public long pauseAt() {
    return pauseAt;
  }

  /** Whether push connections are paused. */
  public boolean isPaused() {
    return paused;
  }

  /**
   * Whether pushes should be answered SLOW_DOWN: while paused, and whenever the data held is above
   * the slow-down mark (halfway between the resume and the pause marks).
   */
  public boolean shouldSlowDown() {
    return paused || used.get() > slowDownAt;
  }

  /** How many times push connections paused since start. */
  public long pauses() {
    synchronized (lock) {
      return pauses;
    }
  }

  /** How long push connections were paused since start, the current pause included. */
  public long pausedNanos() {
    synchronized (lock) {
      return pausedNanos + (paused ? System.nanoTime() - pausedSince : 0);
    }
  }

  /** Tracks a push connection until it closes; a connection opened while paused starts paused. */
  public void register(Channel channel) {
    synchronized (lock) {
      pushChannels.add(channel);
      if (paused) {
        channel.config().setAutoRead(false);
      }
    }
    channel
        .closeFuture()
        .addListener(
            f -> {
              synchronized (lock) {
                pushChannels.remove(channel);
              }
            });
  }

  /**
   * Takes {@code channel} out of the paused set for good: it carries frames a primary forwards to
   * this worker as replica. Two workers that replicate to each other and both reach the pause mark
   * would otherwise stop reading each other's forwards, and each primary holds its frames until its
   * replica answers: both would wait for the forward timeout, and every replicated partition of the
   * pair would split. Forwarded data is still counted; it is bounded by what the primaries
   * themselves accepted. Idempotent; on the channel's event loop.
   */
  public void exemptForwards(Channel channel) {
    synchronized (lock) {
      if (!pushChannels.remove(channel)) {
        return;
      }
    }
    channel.config().setAutoRead(true);
    LOG.debug(
        "Connection {} carries forwards from a primary: never paused", channel.remoteAddress());
  }

  private void pause() {
    synchronized (lock) {
      if (paused || used.get() + partial.get() < pauseAt) {
        return;
      }
      paused = true;
      pauses++;
      pausedSince = System.nanoTime();
      pushChannels.forEach(c -> c.config().setAutoRead(false));
      LOG.info(
          "Pushed data in memory reached {} bytes (pause mark {}, faro.worker.memory.budget): "
              + "pausing {} push connections",
          used.get(),
          pauseAt,
          pushChannels.size());
    }
    startRelief();
  }

  /** Starts the relief loop unless it runs. */
  private void startRelief() {
    if (reliefRunning.compareAndSet(false, true)) {
      scheduleRelief(0);
    }
  }

  private void resume() {
    synchronized (lock) {
      if (!paused || used.get() > resumeAt) {
        return;
      }
      paused = false;
      pausedNanos += System.nanoTime() - pausedSince;
      pushChannels.forEach(c -> c.config().setAutoRead(true));
      LOG.info(
          "Pushed data in memory fell to {} bytes (resume mark {}): resuming {} push connections",
          used.get(),
          resumeAt,
          pushChannels.size());
    }
  }

  private boolean needsRelief() {
    return paused || used.get() > slowDownAt;
  }

  private void scheduleRelief(long delayMs) {
    try {
      reliefExecutor.schedule(this::relieve, delayMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // The worker is closing: nothing is left to relieve.
    }
  }

  private void relieve() {
    if (used.get() <= resumeAt) {
      // A release that raced with the pause saw it not yet paused: resume here instead.
      resume();
    }
    if (!needsRelief()) {
      reliefRunning.set(false);
      // A pause or a reserve above the mark that came between the check and the reset found the
      // loop still running.
      if (!needsRelief() || !reliefRunning.compareAndSet(false, true)) {
        return;
      }
    }
    try {
      relief.run();
    } catch (RuntimeException e) {
      LOG.warn("Flushing partition buffers to relieve memory failed", e);
    }
    scheduleRelief(RELIEF_INTERVAL_MS);
  }
}
