package io.faro.bench.run;

import static java.util.Objects.requireNonNull;

import io.faro.bench.cluster.WorkerReading;

/**
 * What one worker spent during the run, from its own accounting.
 *
 * @param ingestCpuNanos CPU time from before placement until the commit completed
 * @param fetchCpuNanos CPU time while the readers fetched
 * @param end its reading after the fetch (current and peak memory)
 */
public record WorkerUsage(
    String workerId, long ingestCpuNanos, long fetchCpuNanos, WorkerReading end) {
  public WorkerUsage {
    requireNonNull(workerId, "workerId is null");
    requireNonNull(end, "end is null");
  }
}
