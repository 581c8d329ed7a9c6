package io.faro.spark;

/**
 * Throws a checked exception (Spark's Scala-born FetchFailedException) where Java cannot declare
 * it.
 */
final class Sneaky {
  private Sneaky() {}

  /**
   * Throws {@code t} unchecked; declared to return so that callers can write {@code throw
   * rethrow(t)}.
   */
  static RuntimeException rethrow(Throwable t) {
    return Sneaky.<RuntimeException>doThrow(t);
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException doThrow(Throwable t) throws T {
    throw (T) t;
  }
}
