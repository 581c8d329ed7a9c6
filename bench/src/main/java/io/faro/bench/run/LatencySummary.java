package io.faro.bench.run;

/** The count, median and 99th percentile of some durations, in milliseconds. */
public record LatencySummary(long count, double p50Ms, double p99Ms) {
  public static final LatencySummary NONE = new LatencySummary(0, 0, 0);
}
