package io.faro.bench.run;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Durations, for percentiles: keeps every sample up to {@link #CAPACITY}, then a uniform random
 * subset of that size (reservoir sampling), so memory stays bounded however long the run.
 *
 * <p>Not thread-safe: one per thread, combined with {@link #addAll} after joining.
 */
public final class LatencySamples {
  static final int CAPACITY = 1 << 16;

  private final SplittableRandom random;
  private long[] samples = new long[1024];
  private int size;
  private long count;

  public LatencySamples(long seed) {
    this.random = new SplittableRandom(seed);
  }

  public void record(long nanos) {
    count++;
    if (size < CAPACITY) {
      if (size == samples.length) {
        samples = Arrays.copyOf(samples, Math.min(CAPACITY, size * 2));
      }
      samples[size++] = nanos;
      return;
    }
    long slot = random.nextLong(count);
    if (slot < CAPACITY) {
      samples[(int) slot] = nanos;
    }
  }

  /** Adds the samples of {@code other}; above the capacity the combination is a random subset. */
  public void addAll(LatencySamples other) {
    for (int i = 0; i < other.size; i++) {
      record(other.samples[i]);
    }
    // The other's samples beyond its reservoir still count as observations.
    count += other.count - other.size;
  }

  /** Observations recorded, including those the reservoir dropped. */
  public long count() {
    return count;
  }

  /** The {@code quantile} (0..1) of the kept samples in milliseconds, or 0 without samples. */
  public double percentileMillis(double quantile) {
    if (size == 0) {
      return 0;
    }
    long[] sorted = Arrays.copyOf(samples, size);
    Arrays.sort(sorted);
    int index = (int) Math.ceil(quantile * size) - 1;
    return sorted[Math.max(0, Math.min(size - 1, index))] / 1e6;
  }

  public LatencySummary summary() {
    return new LatencySummary(count, percentileMillis(0.50), percentileMillis(0.99));
  }
}
