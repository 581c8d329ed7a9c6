package io.faro.client.fetch;

import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.proto.CommittedFileP;
import io.faro.proto.GetReducerFileGroupsResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What reducers of one committed shuffle generation need: its Faro id, the winning attempt of every
 * map, the committed files of every partition (all epochs in epoch order, each epoch's copies
 * primary first), the partitions lost on every copy, and how many batches the winning attempts
 * pushed to each partition. Immutable.
 */
public final class ReducerFileGroups {
  /** One committed partition file (one copy of one epoch). */
  public record CommittedFile(PartitionLocation location, long bytes, int chunks) {}

  private final ShuffleId faroShuffle;
  private final int[] winningAttempts;
  private final Map<Integer, List<CommittedFile>> filesByPartition;
  private final Set<Integer> lost;
  private final long[] expectedBatches;

  private ReducerFileGroups(
      ShuffleId faroShuffle,
      int[] winningAttempts,
      Map<Integer, List<CommittedFile>> filesByPartition,
      Set<Integer> lost,
      long[] expectedBatches) {
    this.faroShuffle = faroShuffle;
    this.winningAttempts = winningAttempts;
    this.filesByPartition = filesByPartition;
    this.lost = lost;
    this.expectedBatches = expectedBatches;
  }

  public static ReducerFileGroups fromProto(AppId app, GetReducerFileGroupsResponse response) {
    int[] winners =
        response.getWinningAttemptsList().stream().mapToInt(Integer::intValue).toArray();
    Map<Integer, List<CommittedFile>> files = new HashMap<>();
    for (CommittedFileP f : response.getFilesList()) {
      PartitionLocation location = IdMapper.location(f.getLocation());
      files
          .computeIfAbsent(location.partition(), p -> new ArrayList<>())
          .add(new CommittedFile(location, f.getBytes(), f.getChunks()));
    }
    files
        .values()
        .forEach(
            l ->
                l.sort(
                    Comparator.<CommittedFile>comparingInt(c -> c.location().epoch())
                        .thenComparing(c -> c.location().role())));
    files.replaceAll((p, l) -> List.copyOf(l));
    long[] expected =
        response.getExpectedBatchesList().stream().mapToLong(Long::longValue).toArray();
    return new ReducerFileGroups(
        new ShuffleId(app, response.getFaroShuffleId()),
        winners,
        Map.copyOf(files),
        Set.copyOf(response.getLostPartitionIdsList()),
        expected);
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
   * Every committed copy of every epoch of {@code partition}: epoch order, primary before replica.
   */
  public List<CommittedFile> files(int partition) {
    return filesByPartition.getOrDefault(partition, List.of());
  }

  /**
   * How many batches the winning attempts of all maps pushed to {@code partition}, or -1 when the
   * lifecycle manager did not count them (a shuffle whose map stage had no task).
   */
  public long expectedBatches(int partition) {
    return partition >= 0 && partition < expectedBatches.length ? expectedBatches[partition] : -1;
  }

  /** Whether some of {@code partition}'s data is on no committed copy. */
  public boolean lost(int partition) {
    return lost.contains(partition);
  }
}
