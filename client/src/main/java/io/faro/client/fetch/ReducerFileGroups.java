package io.faro.client.fetch;

import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What reducers of some partitions of one committed shuffle generation need: its Faro id, the
 * winning attempt of every map, the committed files of each partition (all epochs in epoch order,
 * each epoch's copies primary first), the partitions lost on every copy, and how many batches the
 * winning attempts pushed to each partition. Made of one or more ranges of partitions (the pages an
 * executor asked for); asking about a partition outside them is a bug and throws. Immutable.
 */
public final class ReducerFileGroups {
  /** One committed partition file (one copy of one epoch). */
  public record CommittedFile(PartitionLocation location, long bytes, int chunks) {}

  /** The answer for partitions [start, end); {@code expected} is empty when not counted. */
  private record Range(
      int start,
      int end,
      Map<Integer, List<CommittedFile>> files,
      Set<Integer> lost,
      long[] expected) {}

  private final ShuffleId faroShuffle;
  private final int[] winningAttempts;
  // Per map: batches its winning attempt pushed in all; empty when the driver did not say.
  private final int[] mapBatches;

  /** Disjoint, in partition order. */
  private final List<Range> ranges;

  private ReducerFileGroups(
      ShuffleId faroShuffle, int[] winningAttempts, int[] mapBatches, List<Range> ranges) {
    this.faroShuffle = faroShuffle;
    this.winningAttempts = winningAttempts;
    this.mapBatches = mapBatches;
    this.ranges = ranges;
  }

  /**
   * The groups of partitions [start, end) of generation {@code faroShuffle}, as the driver answered
   * them ({@code ExecutorProto} reads the answer).
   *
   * @param files the committed files by partition, in any order
   * @param expected per partition of the range, the batches the winners pushed; empty when not
   *     counted
   * @param mapBatches per map, the batches its winning attempt pushed; empty when not counted
   * @throws IllegalArgumentException if {@code expected} or {@code mapBatches} is of another length
   */
  public static ReducerFileGroups of(
      ShuffleId faroShuffle,
      int[] winners,
      int[] mapBatches,
      int start,
      int endPartition,
      Map<Integer, List<CommittedFile>> files,
      Set<Integer> lost,
      long[] expected) {
    Map<Integer, List<CommittedFile>> sorted = new HashMap<>();
    files.forEach((p, l) -> sorted.put(p, new ArrayList<>(l)));
    sorted
        .values()
        .forEach(
            l ->
                l.sort(
                    Comparator.<CommittedFile>comparingInt(c -> c.location().epoch())
                        .thenComparing(c -> c.location().role())));
    sorted.replaceAll((p, l) -> List.copyOf(l));
    int end = Math.max(start, endPartition);
    if (expected.length != 0 && expected.length != end - start) {
      throw new IllegalArgumentException(
          "file groups of partitions "
              + start
              + ".."
              + (end - 1)
              + " count batches of "
              + expected.length
              + " partitions");
    }
    Range range = new Range(start, end, Map.copyOf(sorted), Set.copyOf(lost), expected);
    if (mapBatches.length != 0 && mapBatches.length != winners.length) {
      throw new IllegalArgumentException(
          "file groups count the batches of "
              + mapBatches.length
              + " maps and name the winners of "
              + winners.length);
    }
    return new ReducerFileGroups(faroShuffle, winners, mapBatches, List.of(range));
  }

  /**
   * The groups of several ranges of one generation, as one.
   *
   * @throws IllegalArgumentException if they are of different generations, or overlap
   */
  public static ReducerFileGroups combine(List<ReducerFileGroups> parts) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    ReducerFileGroups first = parts.get(0);
    List<Range> ranges = new ArrayList<>();
    for (ReducerFileGroups part : parts) {
      if (!part.faroShuffle.equals(first.faroShuffle)) {
        throw new IllegalArgumentException(
            "file groups of Faro shuffles " + first.faroShuffle + " and " + part.faroShuffle);
      }
      ranges.addAll(part.ranges);
    }
    ranges.sort(Comparator.comparingInt(Range::start));
    for (int i = 1; i < ranges.size(); i++) {
      if (ranges.get(i).start() < ranges.get(i - 1).end()) {
        throw new IllegalArgumentException(
            "overlapping file groups of shuffle " + first.faroShuffle);
      }
    }
    return new ReducerFileGroups(
        first.faroShuffle, first.winningAttempts, first.mapBatches, List.copyOf(ranges));
  }

  /** Faro's id of the generation these files belong to. */
  public ShuffleId faroShuffle() {
    return faroShuffle;
  }

  public int numMaps() {
    return winningAttempts.length;
  }

  /** The attempt whose data counts for {@code mapId}, or -1 if the map never finished. */
  public int winningAttempt(int mapId) {
    return mapId >= 0 && mapId < winningAttempts.length ? winningAttempts[mapId] : -1;
  }

  /**
   * How many batches the winning attempt of {@code mapId} pushed in all (its batch ids run from 0
   * to one below it), or -1 when the driver did not say.
   */
  public int mapBatches(int mapId) {
    return mapId >= 0 && mapId < mapBatches.length ? mapBatches[mapId] : -1;
  }

  /** Whether these groups answer for every partition of [start, end). */
  public boolean covers(int start, int end) {
    int next = start;
    for (Range r : ranges) {
      if (r.start() <= next && r.end() > next) {
        next = r.end();
      }
    }
    return next >= end;
  }

  /**
   * Every committed copy of every epoch of {@code partition}: epoch order, primary before replica.
   */
  public List<CommittedFile> files(int partition) {
    return range(partition).files().getOrDefault(partition, List.of());
  }

  /**
   * How many batches the winning attempts of all maps pushed to {@code partition}, or -1 when the
   * lifecycle manager did not count them (a shuffle whose map stage had no task).
   */
  public long expectedBatches(int partition) {
    Range r = range(partition);
    return r.expected().length == 0 ? -1 : r.expected()[partition - r.start()];
  }

  /** Whether some of {@code partition}'s data is on no committed copy. */
  public boolean lost(int partition) {
    return range(partition).lost().contains(partition);
  }

  private Range range(int partition) {
    for (Range r : ranges) {
      if (partition >= r.start() && partition < r.end()) {
        return r;
      }
    }
    throw new IllegalArgumentException(
        "partition "
            + partition
            + " of Faro shuffle "
            + faroShuffle
            + " is not among the partitions these file groups answer for "
            + ranges.stream().map(r -> r.start() + ".." + (r.end() - 1)).toList());
  }
}
