package io.faro.bench.run;

import static java.util.Objects.requireNonNull;

import io.faro.bench.workload.Verification;
import java.util.List;

/**
 * What one benchmark run measured.
 *
 * @param bytes record bytes pushed (and, when verified, read back)
 * @param storedBytes bytes the workers stored: compressed batches with their headers
 * @param fetchedBytes bytes the readers fetched, as stored
 * @param pushLatency time from sending each push request to its answer, every request of every map
 *     task (as {@code MapPusher#onPushAnswered} hears it)
 * @param batchCuts time a map task spent on each batch it cut
 * @param mapFinishes time of each map task's {@code finish()}
 * @param mapBlockedMillisMean mean time per map task spent waiting for push answers
 * @param mapSlowDowns push answers, over all map tasks, in which a worker asked to slow down
 * @param mapRevives partitions the map tasks asked new locations for (failed pushes and splits):
 *     overload alone must cause none
 * @param mapBackOffMillisMean the part of {@code mapBlockedMillisMean} spent waiting for the window
 *     of a worker that asked to slow down
 * @param clientIngestCpuNanos this process's CPU time for placement, push and commit
 * @param clientFetchCpuNanos this process's CPU time for the fetch and its verification
 * @param workloadCpuSecondsPerGb the part of the client's CPU per GB that the benchmark's own work
 *     takes (generating and hashing records), measured apart before the run
 */
public record RunResult(
    long bytes,
    long records,
    long storedBytes,
    long fetchedBytes,
    PhaseTimes times,
    LatencySummary pushLatency,
    LatencySummary batchCuts,
    LatencySummary mapFinishes,
    double mapBlockedMillisMean,
    long mapSlowDowns,
    long mapRevives,
    double mapBackOffMillisMean,
    long clientIngestCpuNanos,
    long clientFetchCpuNanos,
    double workloadCpuSecondsPerGb,
    List<WorkerUsage> workers,
    Verification verification) {
  public RunResult {
    requireNonNull(times, "times is null");
    requireNonNull(pushLatency, "pushLatency is null");
    requireNonNull(batchCuts, "batchCuts is null");
    requireNonNull(mapFinishes, "mapFinishes is null");
    workers = List.copyOf(workers);
    requireNonNull(verification, "verification is null");
  }
}
