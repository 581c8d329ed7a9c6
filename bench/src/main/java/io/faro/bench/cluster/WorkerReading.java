package io.faro.bench.cluster;

import static java.util.Objects.requireNonNull;

/**
 * One worker's own accounting at one moment (its {@code WorkerStatusResponse}). Bytes and
 * nanoseconds; peaks are since the worker process started.
 */
public record WorkerReading(
    String workerId,
    long cpuNanos,
    long rssBytes,
    long peakRssBytes,
    long directBytes,
    long peakDirectBytes,
    long budgetUsedBytes,
    long peakBudgetBytes,
    long pauseBytes,
    long heapUsedBytes) {
  public WorkerReading {
    requireNonNull(workerId, "workerId is null");
  }
}
