package io.faro.worker.partition;

import io.faro.common.id.ShuffleId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Counts over every location a store holds, for heartbeats, the masters' quotas, memory relief and
 * the JSON API: each a pass over the shuffles without taking their locks, so a count is a moment's
 * view, never a snapshot.
 */
final class StoreCensus {
  private StoreCensus() {}

  /** See {@link PartitionStore#bytesByShuffle}. */
  static Map<ShuffleId, Long> bytesByShuffle(Collection<ShuffleState> shuffles) {
    Map<ShuffleId, Long> out = new HashMap<>(shuffles.size());
    for (ShuffleState state : shuffles) {
      long bytes = 0;
      for (PartitionWriter writer : state.writers.values()) {
        bytes += writer.bytesTaken();
      }
      for (RestoredPartition restored : state.restored.values()) {
        bytes += restored.commit().chunks().dataLength();
      }
      out.put(state.id, bytes);
    }
    return out;
  }

  /** See {@link PartitionStore#summaries}. */
  static List<ShuffleSummary> summaries(Collection<ShuffleState> shuffles) {
    List<ShuffleSummary> out = new ArrayList<>(shuffles.size());
    for (ShuffleState state : shuffles) {
      int open = 0;
      for (PartitionWriter writer : state.writers.values()) {
        if (writer.isOpen()) {
          open++;
        }
      }
      int locations;
      synchronized (state) {
        open += state.commitStarted ? 0 : state.idle.open();
        locations = state.locations();
      }
      out.add(
          new ShuffleSummary(
              state.id, locations, open, state.restored.size(), state.commitStarted));
    }
    return out;
  }

  /** See {@link PartitionStore#openPartitionsByDisk}. */
  static int[] openPartitionsByDisk(Collection<ShuffleState> shuffles, int diskCount) {
    int[] open = new int[diskCount];
    for (ShuffleState state : shuffles) {
      for (PartitionWriter writer : state.writers.values()) {
        if (writer.isOpen() && writer.diskIndex() >= 0 && writer.diskIndex() < open.length) {
          open[writer.diskIndex()]++;
        }
      }
      // Idle locations take data until the commit (or a seal) starts.
      synchronized (state) {
        if (!state.commitStarted && !state.expired) {
          state.idle.countOpenByDisk(open);
        }
      }
    }
    return open;
  }

  /** See {@link PartitionStore#unfinishedLocations}. */
  static int unfinishedLocations(Collection<ShuffleState> shuffles) {
    int unfinished = 0;
    for (ShuffleState state : shuffles) {
      for (PartitionWriter writer : state.writers.values()) {
        if (writer.commitOutcome().map(f -> !f.isDone()).orElse(true)) {
          unfinished++;
        }
      }
    }
    return unfinished;
  }
}
