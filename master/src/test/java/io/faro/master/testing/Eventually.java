package io.faro.master.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline; a test never sleeps for a fixed time instead. */
public final class Eventually {
  private static final long POLL_NANOS = Duration.ofMillis(20).toNanos();

  private Eventually() {}

  /** Polls {@code condition} until it holds; fails naming {@code what} after {@code timeout}. */
  public static void await(Duration timeout, String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout.toMillis() + "ms waiting for " + what);
      }
      LockSupport.parkNanos(POLL_NANOS);
    }
  }
}
