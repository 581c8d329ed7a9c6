package io.faro.client.lifecycle;

import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.proto.CommittedFileP;
import io.faro.proto.GetReducerFileGroupsResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What reducers of one committed shuffle need: the winning attempt of every map and the
 * committed files of every partition (all epochs, in epoch order). Immutable.
 */
public final class ReducerFileGroups {
  /** One committed partition file. */
  public record CommittedFile(PartitionLocation location, long bytes, int chunks) {}

  private final int[] winningAttempts;
  private final Map<Integer, List<CommittedFile>> filesByPartition;

  private ReducerFileGroups(int[] winningAttempts, Map<Integer, List<CommittedFile>> filesByPartition) {
    this.winningAttempts = winningAttempts;
    this.filesByPartition = filesByPartition;
  }

  public static ReducerFileGroups fromProto(GetReducerFileGroupsResponse response) {
    int[] winners = response.getWinningAttemptsList().stream().mapToInt(Integer::intValue).toArray();
    Map<Integer, List<CommittedFile>> files = new HashMap<>();
    for (CommittedFileP f : response.getFilesList()) {
      PartitionLocation location = IdMapper.location(f.getLocation());
      files.computeIfAbsent(location.partition(), p -> new ArrayList<>())
          .add(new CommittedFile(location, f.getBytes(), f.getChunks()));
    }
    files.values().forEach(l -> l.sort(Comparator.comparingInt(c -> c.location().epoch())));
    files.replaceAll((p, l) -> List.copyOf(l));
    return new ReducerFileGroups(winners, Map.copyOf(files));
  }

  public int numMaps() {
    return winningAttempts.length;
  }

  /** The attempt whose data counts for {@code mapId}, or -1 if the map never finished. */
  public int winningAttempt(int mapId) {
    return mapId >= 0 && mapId < winningAttempts.length ? winningAttempts[mapId] : -1;
  }

  public List<CommittedFile> files(int partition) {
    return filesByPartition.getOrDefault(partition, List.of());
  }
}
