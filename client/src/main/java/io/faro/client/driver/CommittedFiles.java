package io.faro.client.driver;

import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import io.faro.common.id.IdMapper;
import io.faro.proto.CommittedFileP;
import io.faro.proto.GetReducerFileGroupsResponse;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * What the readers of one generation are answered, once its commit ended or it was abandoned: the
 * winning attempt of every map, the committed files ordered by partition, the partitions lost, and
 * (from the generation) the batches expected per partition. Answers any range of partitions with
 * work and a message proportional to that range's files, not to the shuffle. Immutable.
 *
 * <p>Keeps protobuf types: its files are made into answer messages once, not once per reader.
 */
final class CommittedFiles {
  private final Generation generation;
  private final int[] winners;
  private final int[] mapBatches;
  private final CommittedFileP[] files;
  private final int[] filePartitions;
  private final int[] lost;
  private final boolean allLost;

  private CommittedFiles(
      Generation generation, List<CommittedFile> files, int[] lost, boolean allLost) {
    this.generation = generation;
    this.winners = generation.winners();
    this.mapBatches = generation.mapBatches();
    this.files =
        files.stream()
            .sorted(Comparator.comparingInt(f -> f.location().partition()))
            .map(CommittedFiles::toProto)
            .toArray(CommittedFileP[]::new);
    this.filePartitions =
        Arrays.stream(this.files).mapToInt(f -> f.getLocation().getPartitionId()).toArray();
    this.lost = lost.clone();
    Arrays.sort(this.lost);
    this.allLost = allLost;
  }

  /** The files of {@code g}'s commit; {@code lost}: the partitions no committed copy holds. */
  static CommittedFiles committed(Generation g, List<CommittedFile> files, int[] lost) {
    return new CommittedFiles(g, files, lost, false);
  }

  /** {@code g} abandoned: every partition is lost, and no batch is counted. */
  static CommittedFiles abandoned(Generation g) {
    return new CommittedFiles(g, List.of(), new int[0], true);
  }

  /** The answer to readers of partitions [start, end), which must lie within the shuffle. */
  GetReducerFileGroupsResponse answer(int start, int end) {
    GetReducerFileGroupsResponse.Builder b = head(start, end);
    if (allLost) {
      for (int p = start; p < end; p++) {
        b.addLostPartitionIds(p);
      }
      return b.build();
    }
    for (int i = firstAtOrAfter(filePartitions, start);
        i < files.length && filePartitions[i] < end;
        i++) {
      b.addFiles(files[i]);
    }
    for (int i = firstAtOrAfter(lost, start); i < lost.length && lost[i] < end; i++) {
      b.addLostPartitionIds(lost[i]);
    }
    for (int p = start; p < end; p++) {
      b.addExpectedBatches(generation.expectedBatches(p));
    }
    return b.build();
  }

  /**
   * The batch counts a reader of maps [startMap, endMap) of partitions [start, end) must read, and
   * no files (it has them from its pages). An abandoned generation counts nothing: its readers find
   * every partition lost.
   */
  GetReducerFileGroupsResponse batchCounts(int start, int end, int startMap, int endMap) {
    GetReducerFileGroupsResponse.Builder b = head(start, end);
    if (!allLost) {
      for (long expected : generation.expectedBatches(start, end, startMap, endMap)) {
        b.addExpectedBatches(expected);
      }
    }
    return b.build();
  }

  private GetReducerFileGroupsResponse.Builder head(int start, int end) {
    GetReducerFileGroupsResponse.Builder b =
        GetReducerFileGroupsResponse.newBuilder()
            .setFaroShuffleId(generation.id().shuffle())
            .setStartPartition(start)
            .setEndPartition(end);
    for (int w : winners) {
      b.addWinningAttempts(w);
    }
    for (int n : mapBatches) {
      b.addMapBatches(n);
    }
    return b;
  }

  private static CommittedFileP toProto(CommittedFile f) {
    return CommittedFileP.newBuilder()
        .setLocation(IdMapper.toProto(f.location()))
        .setBytes(f.bytes())
        .setChunks(f.chunks())
        .build();
  }

  /** Index of the first element of sorted {@code values} at or after {@code value}. */
  private static int firstAtOrAfter(int[] values, int value) {
    int low = 0;
    int high = values.length;
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (values[mid] < value) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low;
  }
}
