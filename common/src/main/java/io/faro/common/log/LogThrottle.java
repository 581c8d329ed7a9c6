package io.faro.common.log;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Decides whether one more line of a kind may be logged: at most {@code linesPerInterval} lines in
 * each interval (fixed windows of the clock), the rest suppressed and counted. The next line
 * allowed learns how many were suppressed since the line before it, so that it can say so.
 *
 * <p>Thread-safe without locks: the window and the lines allowed in it are one {@link AtomicLong}
 * (window number in the high bits, count in the low {@value #COUNT_BITS}), advanced by
 * compare-and-set; a suppressed line costs one read and two increments. Used on Netty event loops,
 * where a peer that sends garbage as fast as it can must not make the process log as fast as it
 * can.
 */
public final class LogThrottle {
  private static final int COUNT_BITS = 20;
  private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;

  /** The most lines per interval this throttle can count. */
  public static final int MAX_LINES_PER_INTERVAL = (int) COUNT_MASK;

  /**
   * What to do with one line; {@link #SUPPRESSED} when it must not be logged.
   *
   * @param suppressedBefore when logged: the lines suppressed since the previous logged line
   * @param nanosSincePrevious when some were suppressed: how long ago that previous line was
   */
  public record Decision(boolean log, long suppressedBefore, long nanosSincePrevious) {
    public Decision {
      if (suppressedBefore < 0 || nanosSincePrevious < 0) {
        throw new IllegalArgumentException("negative count or time");
      }
    }
  }

  /** The answer for a line that is counted, not logged. */
  public static final Decision SUPPRESSED = new Decision(false, 0, 0);

  private static final Decision LOG_PLAIN = new Decision(true, 0, 0);

  private final int linesPerInterval;
  private final long intervalNanos;
  private final LongSupplier nanoTime;
  private final long origin;
  // Window number << COUNT_BITS | lines allowed in that window.
  private final AtomicLong window = new AtomicLong();
  // Suppressed since the last allowed line; taken (reset) by the next allowed line.
  private final AtomicLong pending = new AtomicLong();
  private final AtomicLong suppressedTotal = new AtomicLong();
  private final AtomicLong lastLogged;

  /**
   * @param nanoTime a monotonic clock in nanoseconds ({@code System::nanoTime}; a fake in tests)
   */
  public LogThrottle(int linesPerInterval, Duration interval, LongSupplier nanoTime) {
    if (linesPerInterval < 1 || linesPerInterval > MAX_LINES_PER_INTERVAL) {
      throw new IllegalArgumentException(
          "linesPerInterval must be in [1, " + MAX_LINES_PER_INTERVAL + "]: " + linesPerInterval);
    }
    requireNonNull(interval, "interval is null");
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("interval must be positive: " + interval);
    }
    this.linesPerInterval = linesPerInterval;
    this.intervalNanos = interval.toNanos();
    this.nanoTime = requireNonNull(nanoTime, "nanoTime is null");
    this.origin = nanoTime.getAsLong();
    this.lastLogged = new AtomicLong(origin);
  }

  /** Decides about one line; a suppressed line is counted. */
  public Decision acquire() {
    long now = nanoTime.getAsLong();
    long current = Math.max(0, (now - origin) / intervalNanos);
    while (true) {
      long state = window.get();
      long stateWindow = state >>> COUNT_BITS;
      long count = state & COUNT_MASK;
      long next;
      if (stateWindow >= current) {
        // This window (or a later one, seen by a thread that read the clock after us).
        if (count >= linesPerInterval) {
          pending.incrementAndGet();
          suppressedTotal.incrementAndGet();
          return SUPPRESSED;
        }
        next = state + 1;
      } else {
        next = (current << COUNT_BITS) | 1;
      }
      if (window.compareAndSet(state, next)) {
        break;
      }
    }
    long previous = lastLogged.getAndSet(now);
    long suppressed = pending.getAndSet(0);
    return suppressed == 0
        ? LOG_PLAIN
        : new Decision(true, suppressed, Math.max(0, now - previous));
  }

  /** Every line suppressed since this throttle was made. */
  public long suppressedTotal() {
    return suppressedTotal.get();
  }
}
