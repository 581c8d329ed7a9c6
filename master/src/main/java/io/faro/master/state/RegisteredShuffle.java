package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
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
 */
public record RegisteredShuffle(ShuffleId id, int numPartitions, SortedMap<WorkerId, Integer> slotsPerWorker) {
  public RegisteredShuffle {
    requireNonNull(id, "id is null");
    if (numPartitions <= 0) {
      throw new IllegalArgumentException("shuffle " + id + " has " + numPartitions + " partitions");
    }
    SortedMap<WorkerId, Integer> copy = new TreeMap<>(MasterState.WORKER_ORDER);
    copy.putAll(slotsPerWorker);
    slotsPerWorker = Collections.unmodifiableSortedMap(copy);
  }

  public static RegisteredShuffle of(ShuffleId id, int numPartitions, Map<WorkerId, Integer> slots) {
    SortedMap<WorkerId, Integer> sorted = new TreeMap<>(MasterState.WORKER_ORDER);
    sorted.putAll(slots);
    return new RegisteredShuffle(id, numPartitions, sorted);
  }

  /** This shuffle with {@code locations} (and their replicas) added; the partition count only grows. */
  public RegisteredShuffle withSlots(int partitions, List<PartitionLocation> locations) {
    SortedMap<WorkerId, Integer> slots = new TreeMap<>(slotsPerWorker);
    for (PartitionLocation primary : locations) {
      for (PartitionLocation copy : primary.copies()) {
        slots.merge(copy.worker(), 1, Integer::sum);
      }
    }
    return new RegisteredShuffle(id, Math.max(numPartitions, partitions), slots);
  }

  public int totalSlots() {
    return slotsPerWorker.values().stream().mapToInt(Integer::intValue).sum();
  }
}
