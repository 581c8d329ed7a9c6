package io.faro.examples;

/**
 * Turns the base sizes of a {@link ComparisonJob} into the sizes at a {@code scale}: record counts
 * grow linearly with it and task counts with its square root, so that maps x reducers (the number
 * of shuffle blocks) also grows linearly and the records per block stay the same at every scale.
 * Task counts never go below 2.
 */
final class JobScale {
  private JobScale() {}

  /** {@code base} records at {@code scale}, at least 1. */
  static long records(long base, double scale) {
    return Math.max(1, Math.round(base * scale));
  }

  /** {@code base} tasks at {@code scale}, at least 2. */
  static int tasks(int base, double scale) {
    return (int) Math.max(2, Math.round(base * Math.sqrt(scale)));
  }
}
