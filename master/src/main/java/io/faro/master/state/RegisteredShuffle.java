package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A shuffle with slots on workers. The master keeps counts, not locations: the lifecycle manager
 * owns the locations, and the counts are what placement and cleanup need.
 *
 * @param slotsPerWorker how many partition locations of this shuffle each worker holds
 * @param recentAllocations the slot counts of the latest {@link #RECENT_ALLOCATIONS} allocations
 *     that came with a request id, oldest first: a retried request replaces its own counts
 */
public record RegisteredShuffle(
    ShuffleId id,
    int numPartitions,
    SortedMap<WorkerId, Integer> slotsPerWorker,
    List<RecentAllocation> recentAllocations) {
  /**
   * Allocations remembered per shuffle: retries come within seconds, revives of one shuffle not by
   * hundreds.
   */
  public static final int RECENT_ALLOCATIONS = 32;

  /** The slots one RequestSlots request was given. */
  public record RecentAllocation(String requestId, SortedMap<WorkerId, Integer> slotsPerWorker) {
    public RecentAllocation {
      requireNonNull(requestId, "requestId is null");
      SortedMap<WorkerId, Integer> copy = new TreeMap<>(MasterState.WORKER_ORDER);
      copy.putAll(slotsPerWorker);
      slotsPerWorker = Collections.unmodifiableSortedMap(copy);
    }

    public static RecentAllocation of(String requestId, Map<WorkerId, Integer> slots) {
      SortedMap<WorkerId, Integer> sorted = new TreeMap<>(MasterState.WORKER_ORDER);
      sorted.putAll(slots);
      return new RecentAllocation(requestId, sorted);
    }
  }

  public RegisteredShuffle {
    requireNonNull(id, "id is null");
    if (numPartitions <= 0) {
      throw new IllegalArgumentException("shuffle " + id + " has " + numPartitions + " partitions");
    }
    SortedMap<WorkerId, Integer> copy = new TreeMap<>(MasterState.WORKER_ORDER);
    copy.putAll(slotsPerWorker);
    slotsPerWorker = Collections.unmodifiableSortedMap(copy);
    recentAllocations = List.copyOf(recentAllocations);
  }

  public static RegisteredShuffle of(
      ShuffleId id, int numPartitions, Map<WorkerId, Integer> slots) {
    return of(id, numPartitions, slots, List.of());
  }

  public static RegisteredShuffle of(
      ShuffleId id,
      int numPartitions,
      Map<WorkerId, Integer> slots,
      List<RecentAllocation> recent) {
    SortedMap<WorkerId, Integer> sorted = new TreeMap<>(MasterState.WORKER_ORDER);
    sorted.putAll(slots);
    return new RegisteredShuffle(id, numPartitions, sorted, recent);
  }

  /**
   * This shuffle with {@code added} slots (per worker, replicas included) on top; the partition
   * count only grows. When an allocation of the same non-empty {@code requestId} is remembered (a
   * retry after a leader change), its counts are taken back first, so that the shuffle holds one
   * allocation per request.
   */
  public RegisteredShuffle withSlots(
      int partitions, SortedMap<WorkerId, Integer> added, String requestId) {
    SortedMap<WorkerId, Integer> slots = new TreeMap<>(slotsPerWorker);
    List<RecentAllocation> recent = new ArrayList<>(recentAllocations);
    if (!requestId.isEmpty()) {
      for (int i = 0; i < recent.size(); i++) {
        if (recent.get(i).requestId().equals(requestId)) {
          recent
              .remove(i)
              .slotsPerWorker()
              .forEach(
                  (worker, n) ->
                      slots.computeIfPresent(worker, (w, held) -> held - n > 0 ? held - n : null));
          break;
        }
      }
    }
    added.forEach((worker, n) -> slots.merge(worker, n, Integer::sum));
    if (!requestId.isEmpty()) {
      recent.add(new RecentAllocation(requestId, added));
      while (recent.size() > RECENT_ALLOCATIONS) {
        recent.remove(0);
      }
    }
    return new RegisteredShuffle(id, Math.max(numPartitions, partitions), slots, recent);
  }

  public int totalSlots() {
    return slotsPerWorker.values().stream().mapToInt(Integer::intValue).sum();
  }
}
