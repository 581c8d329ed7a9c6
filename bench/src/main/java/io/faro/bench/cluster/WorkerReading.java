package io.faro.bench.cluster;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * One worker's own accounting at one moment (its {@code WorkerStatusResponse}). Bytes and
 * nanoseconds; peaks are since the worker process started. {@code diskIoModes}: "direct" or
 * "buffered" per disk.
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
    long pauses,
    long pausedMs,
    long heapUsedBytes,
    List<String> diskIoModes) {
  public WorkerReading {
    requireNonNull(workerId, "workerId is null");
    diskIoModes = List.copyOf(diskIoModes);
  }
}
