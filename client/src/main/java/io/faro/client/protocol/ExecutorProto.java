package io.faro.client.protocol;

import io.faro.client.EngineShuffleId;
import io.faro.client.MapAttempt;
import io.faro.client.ReadRange;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import io.faro.client.push.MapPusher;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.proto.CommittedFileP;
import io.faro.proto.EmptyResponse;
import io.faro.proto.GetPushLocationsRequest;
import io.faro.proto.GetPushLocationsResponse;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import io.faro.proto.ReportShuffleLostRequest;
import io.faro.proto.RevivePartitionP;
import io.faro.proto.ReviveRequest;
import io.faro.proto.ReviveResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The executor side's protobuf edge: what an executor asks the driver's lifecycle manager (push
 * locations, revives, map ends, file groups, lost data), built from and read into Faro's own types.
 * The rest of the executor side ({@code WriterSide}, {@code ReaderSide}, the pushers and readers)
 * sees no protobuf message. Each method sends one request on the executor's {@link ClientPool},
 * except {@link #failed}, the driver's reading of a revive request, kept beside its building.
 */
public final class ExecutorProto {
  private ExecutorProto() {}

  /** The answer to a push locations ask: the generation to write, and the locations asked for. */
  public record PushLocations(ShuffleId faroShuffle, List<PartitionLocation> locations) {}

  /** The answer to a map end: the attempt that won the map, and whether its generation was lost. */
  public record MapperEnd(int winningAttempt, boolean generationLost) {}

  /**
   * Where partitions [start, end) of the generation that map stage attempt {@code stage} writes
   * take pushes (none when {@code start == end}: the generation only).
   */
  public static CompletableFuture<PushLocations> pushLocations(
      ClientPool pool,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      long stage,
      int numMaps,
      int numPartitions,
      int start,
      int end,
      Duration timeout) {
    return pool.call(
            lifecycle,
            GetPushLocationsRequest.newBuilder()
                .setShuffleId(shuffle.id())
                .setNumMaps(numMaps)
                .setNumPartitions(numPartitions)
                .setStageId((int) (stage >>> 32))
                .setStageAttempt((int) stage)
                .setStartPartition(start)
                .setEndPartition(end)
                .build(),
            GetPushLocationsResponse.class,
            timeout)
        .thenApply(
            r ->
                new PushLocations(
                    new ShuffleId(shuffle.app(), r.getFaroShuffleId()),
                    r.getLocationsList().stream().map(IdMapper::location).toList()));
  }

  /** Where the {@code failed} partitions of generation {@code faroShuffle} go on. */
  public static CompletableFuture<List<PartitionLocation>> revive(
      ClientPool pool,
      HostPort lifecycle,
      ShuffleId faroShuffle,
      List<MapPusher.Failed> failed,
      Duration timeout) {
    ReviveRequest.Builder request = ReviveRequest.newBuilder().setShuffleId(faroShuffle.shuffle());
    for (MapPusher.Failed f : failed) {
      RevivePartitionP.Builder p =
          RevivePartitionP.newBuilder().setPartitionId(f.partition()).setEpoch(f.epoch());
      f.worker().ifPresent(w -> p.setFailedWorker(w.value()));
      request.addPartitions(p);
    }
    return pool.call(lifecycle, request.build(), ReviveResponse.class, timeout)
        .thenApply(r -> r.getLocationsList().stream().map(IdMapper::location).toList());
  }

  /** The driver's reading of a {@link #revive} request: the partitions whose push failed. */
  public static List<MapPusher.Failed> failed(ReviveRequest request) {
    List<MapPusher.Failed> failed = new ArrayList<>(request.getPartitionsCount());
    for (RevivePartitionP p : request.getPartitionsList()) {
      Optional<WorkerId> worker =
          p.getFailedWorker().isEmpty()
              ? Optional.empty()
              : Optional.of(new WorkerId(p.getFailedWorker()));
      failed.add(new MapPusher.Failed(p.getPartitionId(), p.getEpoch(), worker));
    }
    return failed;
  }

  /**
   * Reports the end of {@code attempt}, which wrote generation {@code faro}; {@code batchCounts}:
   * the batches it pushed per partition (partitions of none are not sent).
   */
  public static CompletableFuture<MapperEnd> mapperEnd(
      ClientPool pool,
      HostPort lifecycle,
      ShuffleId faro,
      MapAttempt attempt,
      int numMaps,
      int[] batchCounts,
      boolean incomplete) {
    MapperEndRequest.Builder request =
        MapperEndRequest.newBuilder()
            .setShuffleId(faro.shuffle())
            .setMapId(attempt.mapId())
            .setAttemptId(attempt.attemptId())
            .setNumMaps(numMaps)
            .setIncomplete(incomplete);
    for (int p = 0; p < batchCounts.length; p++) {
      if (batchCounts[p] > 0) {
        request.addBatchPartitions(p).addBatchCounts(batchCounts[p]);
      }
    }
    return pool.call(lifecycle, request.build(), MapperEndResponse.class)
        .thenApply(r -> new MapperEnd(r.getWinningAttemptId(), r.getGenerationLost()));
  }

  /**
   * The committed files of partitions [start, end) of engine shuffle {@code shuffle}, of generation
   * {@code generation} when not null, else of the latest.
   */
  public static CompletableFuture<ReducerFileGroups> fileGroups(
      ClientPool pool,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int numMaps,
      int start,
      int end,
      Integer generation,
      Duration timeout) {
    GetReducerFileGroupsRequest.Builder request =
        GetReducerFileGroupsRequest.newBuilder()
            .setShuffleId(shuffle.id())
            .setNumMaps(numMaps)
            .setStartPartition(start)
            .setEndPartition(end);
    if (generation != null) {
      request.setFaroShuffleId(generation);
    }
    return pool.call(lifecycle, request.build(), GetReducerFileGroupsResponse.class, timeout)
        .thenApply(r -> fileGroups(shuffle.app(), r));
  }

  /**
   * The batches the winning attempts of {@code range}'s maps pushed to each of its partitions, of
   * the generation of {@code groups}; empty when the driver does not count them.
   */
  public static CompletableFuture<long[]> mapRangeBatches(
      ClientPool pool,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      ReducerFileGroups groups,
      ReadRange range,
      Duration timeout) {
    GetReducerFileGroupsRequest request =
        GetReducerFileGroupsRequest.newBuilder()
            .setShuffleId(shuffle.id())
            .setNumMaps(groups.numMaps())
            .setStartPartition(range.startPartition())
            .setEndPartition(range.endPartition())
            .setFaroShuffleId(groups.faroShuffle().shuffle())
            .setBatchCountsOnly(true)
            .setStartMap(Math.max(0, range.startMap()))
            .setEndMap(Math.min(groups.numMaps(), range.endMap()))
            .build();
    return pool.call(lifecycle, request, GetReducerFileGroupsResponse.class, timeout)
        .thenApply(r -> r.getExpectedBatchesList().stream().mapToLong(Long::longValue).toArray());
  }

  /** Tells the driver that data of partition {@code partition} of {@code faroShuffle} is lost. */
  public static CompletableFuture<?> reportLost(
      ClientPool pool, HostPort lifecycle, ShuffleId faroShuffle, int partition, String reason) {
    ReportShuffleLostRequest request =
        ReportShuffleLostRequest.newBuilder()
            .setFaroShuffleId(faroShuffle.shuffle())
            .setPartitionId(partition)
            .setReason(reason)
            .build();
    return pool.call(lifecycle, request, EmptyResponse.class);
  }

  /**
   * Reads the driver's answer of file groups of one range of partitions of app {@code app}.
   *
   * @throws IllegalArgumentException if the answer's counts do not match its partitions or maps
   */
  public static ReducerFileGroups fileGroups(AppId app, GetReducerFileGroupsResponse response) {
    int[] winners =
        response.getWinningAttemptsList().stream().mapToInt(Integer::intValue).toArray();
    Map<Integer, List<CommittedFile>> files = new HashMap<>();
    for (CommittedFileP f : response.getFilesList()) {
      PartitionLocation location = IdMapper.location(f.getLocation());
      files
          .computeIfAbsent(location.partition(), p -> new ArrayList<>())
          .add(new CommittedFile(location, f.getBytes(), f.getChunks()));
    }
    long[] expected =
        response.getExpectedBatchesList().stream().mapToLong(Long::longValue).toArray();
    int[] mapBatches = response.getMapBatchesList().stream().mapToInt(Integer::intValue).toArray();
    return ReducerFileGroups.of(
        new ShuffleId(app, response.getFaroShuffleId()),
        winners,
        mapBatches,
        response.getStartPartition(),
        response.getEndPartition(),
        files,
        Set.copyOf(response.getLostPartitionIdsList()),
        expected);
  }
}
