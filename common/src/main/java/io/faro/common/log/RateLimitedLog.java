package io.faro.common.log;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * A logger's warnings about things peers do (a corrupt frame, a reset connection, a request that
 * failed), each kind {@code K} rate-limited on its own by a {@link LogThrottle}: a scanner or a
 * broken client cannot fill the disk with the same line, and one noisy kind does not hide another.
 * A line logged after some were suppressed ends with {@code "(and 1234 more like it in the last 10
 * s)"}; {@link #suppressed()} gives the total, for metrics.
 *
 * <p>The kinds are an enum, so they are fixed in code and never come from the wire. Thread-safe
 * without locks: the throttles are made up front and only read afterwards. One instance per owner
 * (a server, a client pool), not static, so that two servers in one JVM count apart.
 *
 * @param <K> the kinds of line, each throttled on its own
 */
public final class RateLimitedLog<K extends Enum<K>> {
  /** Lines of one kind per interval that servers log by default. */
  public static final int DEFAULT_LINES = 10;

  /** The interval of the default. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

  private final Logger logger;
  private final Map<K, LogThrottle> throttles;

  /** {@value #DEFAULT_LINES} lines per kind every 10 s, on the system's monotonic clock. */
  public RateLimitedLog(Logger logger, Class<K> kinds) {
    this(logger, kinds, DEFAULT_LINES, DEFAULT_INTERVAL, System::nanoTime);
  }

  /**
   * @param nanoTime a monotonic clock in nanoseconds ({@code System::nanoTime}; a fake in tests)
   */
  public RateLimitedLog(
      Logger logger,
      Class<K> kinds,
      int linesPerInterval,
      Duration interval,
      LongSupplier nanoTime) {
    this.logger = requireNonNull(logger, "logger is null");
    requireNonNull(kinds, "kinds is null");
    Map<K, LogThrottle> map = new EnumMap<>(kinds);
    for (K kind : kinds.getEnumConstants()) {
      map.put(kind, new LogThrottle(linesPerInterval, interval, nanoTime));
    }
    this.throttles = map;
  }

  /**
   * Logs at WARN unless too many lines of {@code kind} were logged in this interval. Takes slf4j's
   * {@code {}} format; a Throwable as the last argument is logged with its stack trace. Arguments
   * that came from the wire should go through {@link LogSafe} first.
   */
  public void warn(K kind, String format, Object... args) {
    if (!logger.isWarnEnabled()) {
      return;
    }
    LogThrottle.Decision decision = throttles.get(kind).acquire();
    if (!decision.log()) {
      return;
    }
    if (decision.suppressedBefore() == 0) {
      logger.warn(format, args);
      return;
    }
    logger.warn(
        format + " (and {} more like it in the last {})",
        withSummary(args, decision.suppressedBefore(), describe(decision.nanosSincePrevious())));
  }

  /** The summary's arguments go before a trailing Throwable, which slf4j takes as the cause. */
  private static Object[] withSummary(Object[] args, long suppressed, String since) {
    boolean trailingThrowable = args.length > 0 && args[args.length - 1] instanceof Throwable;
    int plain = trailingThrowable ? args.length - 1 : args.length;
    Object[] out = Arrays.copyOf(args, args.length + 2);
    out[plain] = suppressed;
    out[plain + 1] = since;
    if (trailingThrowable) {
      out[plain + 2] = args[args.length - 1];
    }
    return out;
  }

  /** "850 ms", "10 s", "3 min": how long ago the previous line of the kind was logged. */
  static String describe(long nanos) {
    long millis = nanos / 1_000_000;
    if (millis < 1000) {
      return millis + " ms";
    }
    long seconds = Math.round(millis / 1000.0);
    return seconds < 600 ? seconds + " s" : Math.round(seconds / 60.0) + " min";
  }

  /** Lines of {@code kind} suppressed so far. */
  public long suppressed(K kind) {
    return throttles.get(kind).suppressedTotal();
  }

  /** Lines suppressed so far, of every kind. */
  public long suppressed() {
    long total = 0;
    for (LogThrottle t : throttles.values()) {
      total += t.suppressedTotal();
    }
    return total;
  }
}
