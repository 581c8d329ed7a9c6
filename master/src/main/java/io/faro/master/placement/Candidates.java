package io.faro.master.placement;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import java.util.List;

/** What every {@link SlotPlacement} checks and chooses the same way. */
final class Candidates {
  private Candidates() {}

  /**
   * The candidates with a usable disk.
   *
   * @throws FaroException NO_AVAILABLE_WORKERS when none has one, or fewer than two do for a
   *     request with replicas
   */
  static List<WorkerCandidate> usable(PlacementRequest request, List<WorkerCandidate> candidates) {
    List<WorkerCandidate> usable =
        candidates.stream().filter(c -> !c.usableDisks().isEmpty()).toList();
    if (usable.isEmpty()) {
      throw new FaroException(
          ErrorCode.NO_AVAILABLE_WORKERS,
          "no available workers for shuffle "
              + request.shuffle()
              + ": "
              + candidates.size()
              + " alive workers, none with a healthy "
              + "disk; start workers or wait until they register (retry later)");
    }
    if (request.replicate() && usable.size() < 2) {
      throw new FaroException(
          ErrorCode.NO_AVAILABLE_WORKERS,
          "cannot place shuffle "
              + request.shuffle()
              + " with replication (faro.client.push.replicate.enabled): it needs two workers with a "
              + "healthy disk, "
              + usable.size()
              + " available; start workers or wait until they register");
    }
    return usable;
  }

  /** How many of {@code usable} workers one request spreads over: the cap, and two for replicas. */
  static int workerCount(PlacementRequest request, int usable, int maxWorkersPerShuffle) {
    int workers = Math.min(maxWorkersPerShuffle, usable);
    return request.replicate() ? Math.max(2, workers) : workers;
  }

  /**
   * Partition {@code i} of {@code request}, in {@code role}, on {@code worker}'s disk {@code disk}.
   */
  static PartitionLocation location(
      PlacementRequest request, int i, Role role, WorkerCandidate worker, int disk) {
    return new PartitionLocation(
        request.partitions().get(i), request.epoch(), role, worker.id(), worker.endpoint(), disk);
  }

  /**
   * The worker that holds the replicas of worker {@code w}'s primaries: the next chosen worker on
   * another host, or the next chosen worker when all share one host (a single machine). One primary
   * then forwards to one peer, and losing one machine never loses both copies.
   */
  static int replicaOf(List<WorkerCandidate> chosen, int w) {
    String host = chosen.get(w).endpoint().host();
    for (int k = 1; k < chosen.size(); k++) {
      int candidate = (w + k) % chosen.size();
      if (!chosen.get(candidate).endpoint().host().equals(host)) {
        return candidate;
      }
    }
    return (w + 1) % chosen.size();
  }
}
