package io.faro.common.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waits until a condition holds, polling, with a deadline: how tests wait for what other threads
 * do, instead of sleeping a fixed time. A wait that times out fails the test naming what it
 * awaited, and the last value it saw when it watched one.
 *
 * <p>Shared by every module's tests through the test-jar of faro-common.
 */
public final class Eventually {
  /** How long a wait lasts unless the test gives its own timeout. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  private static final long POLL_NANOS = Duration.ofMillis(10).toNanos();

  private Eventually() {}

  /**
   * Polls {@code condition} until it holds; fails naming {@code what} after {@link
   * #DEFAULT_TIMEOUT}.
   */
  public static void await(String what, BooleanSupplier condition) {
    await(what, DEFAULT_TIMEOUT, condition);
  }

  /** Polls {@code condition} until it holds; fails naming {@code what} after {@code timeout}. */
  public static void await(String what, Duration timeout, BooleanSupplier condition) {
    poll(what, timeout, POLL_NANOS, condition::getAsBoolean, held -> held, false);
  }

  /**
   * Reads {@code value} until {@code condition} holds for what it read, and returns that; fails
   * naming {@code what} and the last value read after {@link #DEFAULT_TIMEOUT}.
   */
  public static <T> T await(String what, Supplier<T> value, Predicate<? super T> condition) {
    return await(what, DEFAULT_TIMEOUT, value, condition);
  }

  /** As {@link #await(String, Supplier, Predicate)}, failing after {@code timeout}. */
  public static <T> T await(
      String what, Duration timeout, Supplier<T> value, Predicate<? super T> condition) {
    return poll(what, timeout, POLL_NANOS, value, condition, true);
  }

  /**
   * As {@link #await(String, Duration, Supplier, Predicate)}, reading {@code value} only every
   * {@code interval}: for reads that cost (a process started, a shuffle registered).
   */
  public static <T> T awaitEvery(
      Duration interval,
      String what,
      Duration timeout,
      Supplier<T> value,
      Predicate<? super T> condition) {
    return poll(what, timeout, interval.toNanos(), value, condition, true);
  }

  private static <T> T poll(
      String what,
      Duration timeout,
      long pollNanos,
      Supplier<T> value,
      Predicate<? super T> condition,
      boolean showLast) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      T seen = value.get();
      if (condition.test(seen)) {
        return seen;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after "
                + timeout.toMillis()
                + "ms waiting for "
                + what
                + (showLast ? "; last seen: " + seen : ""));
      }
      LockSupport.parkNanos(pollNanos);
    }
  }
}
