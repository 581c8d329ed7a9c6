package io.faro.client;

import static java.util.Objects.requireNonNull;

import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
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
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The executor side of Faro, one per executor process and shared by every task and shuffle: it asks
 * the driver's lifecycle manager where to push, where to push next when a push fails, and what to
 * read (caching locations per shuffle generation and file groups per reading stage), and creates
 * the per-task {@link MapPusher}s and {@link PartitionReader}s. Uses the process's shared {@link
 * ClientPool}, which it borrows. Thread-safe.
 *
 * <p>Shuffle ids: callers name the engine's shuffle ({@code ShuffleId(app, engine id)}); the
 * lifecycle manager answers with the Faro id of the generation to write or read, which is what
 * workers see (see {@link io.faro.client.driver.LifecycleManager}).
 */
public final class ShuffleClient {
  /** Where the partitions of one generation take pushes; shared by this executor's tasks. */
  public record PushTargets(
      ShuffleId faroShuffle, AtomicReferenceArray<PartitionLocation> locations) {}

  private record WriterKey(ShuffleId engineShuffle, long stage) {}

  private record ReaderKey(ShuffleId engineShuffle, long readerStage) {}

  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final Map<WriterKey, CompletableFuture<PushTargets>> pushTargets =
      new ConcurrentHashMap<>();
  private final Map<ReaderKey, CompletableFuture<ReducerFileGroups>> fileGroups =
      new ConcurrentHashMap<>();

  public ShuffleClient(ClientPool pool, ClientOptions.Settings settings) {
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
  }

  public ClientOptions.Settings settings() {
    return settings;
  }

  /** The key of a stage attempt: stage id in the high 32 bits, attempt number in the low. */
  public static long stageKey(int stageId, int stageAttempt) {
    return ((long) stageId << 32) | (stageAttempt & 0xffffffffL);
  }

  /**
   * Where each partition of the generation that map stage attempt {@code stage} ({@link #stageKey})
   * writes takes pushes; asks the driver once per shuffle and stage attempt.
   */
  public PushTargets pushTargets(
      HostPort lifecycle, ShuffleId shuffle, long stage, int numMaps, int numPartitions) {
    WriterKey key = new WriterKey(shuffle, stage);
    CompletableFuture<PushTargets> f =
        pushTargets.computeIfAbsent(
            key,
            k ->
                pool.call(
                        lifecycle,
                        GetPushLocationsRequest.newBuilder()
                            .setShuffleId(shuffle.shuffle())
                            .setNumMaps(numMaps)
                            .setNumPartitions(numPartitions)
                            .setStageId((int) (stage >>> 32))
                            .setStageAttempt((int) stage)
                            .build(),
                        GetPushLocationsResponse.class)
                    .thenApply(
                        r -> {
                          ShuffleId faro = new ShuffleId(shuffle.app(), r.getFaroShuffleId());
                          List<PartitionLocation> locations =
                              r.getLocationsList().stream().map(IdMapper::location).toList();
                          return new PushTargets(
                              faro, MapPusher.targets(faro, locations, numPartitions));
                        }));
    return awaitCached(
        pushTargets, key, f, "push locations of shuffle " + shuffle + " from " + lifecycle);
  }

  /** The current push location of every partition (stage attempt 0). */
  public List<PartitionLocation> pushLocations(
      HostPort lifecycle, ShuffleId shuffle, int numMaps, int numPartitions) {
    AtomicReferenceArray<PartitionLocation> targets =
        pushTargets(lifecycle, shuffle, 0, numMaps, numPartitions).locations();
    List<PartitionLocation> result = new ArrayList<>(targets.length());
    for (int p = 0; p < targets.length(); p++) {
      result.add(targets.get(p));
    }
    return result;
  }

  public MapPusher newMapPusher(
      HostPort lifecycle,
      ShuffleId shuffle,
      int mapId,
      int attemptId,
      int numMaps,
      int numPartitions) {
    return newMapPusher(lifecycle, shuffle, 0, mapId, attemptId, numMaps, numPartitions);
  }

  /**
   * A pusher for one attempt of map {@code mapId}, of map stage attempt {@code stage} ({@link
   * #stageKey}).
   */
  public MapPusher newMapPusher(
      HostPort lifecycle,
      ShuffleId shuffle,
      long stage,
      int mapId,
      int attemptId,
      int numMaps,
      int numPartitions) {
    PushTargets targets = pushTargets(lifecycle, shuffle, stage, numMaps, numPartitions);
    return new MapPusher(
        targets.faroShuffle(),
        mapId,
        attemptId,
        targets.locations(),
        failed -> revive(lifecycle, targets.faroShuffle(), failed),
        pool,
        settings,
        PooledByteBufAllocator.DEFAULT);
  }

  /** Asks the lifecycle manager where the failed partitions go on; blocks. */
  private List<PartitionLocation> revive(
      HostPort lifecycle, ShuffleId faroShuffle, List<MapPusher.Failed> failed) {
    ReviveRequest.Builder request = ReviveRequest.newBuilder().setShuffleId(faroShuffle.shuffle());
    for (MapPusher.Failed f : failed) {
      RevivePartitionP.Builder p =
          RevivePartitionP.newBuilder().setPartitionId(f.partition()).setEpoch(f.epoch());
      f.worker().ifPresent(w -> p.setFailedWorker(w.value()));
      request.addPartitions(p);
    }
    // A revive asks the master for slots and reserves them: give it longer than one call.
    java.time.Duration timeout = settings.network().requestTimeout().multipliedBy(3);
    ReviveResponse response =
        Futures.await(
            pool.call(lifecycle, request.build(), ReviveResponse.class, timeout),
            timeout.plusSeconds(1),
            "revive of " + failed.size() + " partitions of " + faroShuffle);
    return response.getLocationsList().stream().map(IdMapper::location).toList();
  }

  public int mapperEnd(
      HostPort lifecycle,
      ShuffleId shuffle,
      int mapId,
      int attemptId,
      int numMaps,
      int[] batchCounts) {
    return mapperEnd(lifecycle, shuffle, 0, mapId, attemptId, numMaps, batchCounts);
  }

  /**
   * Reports a successful map attempt of map stage attempt {@code stage} (whose pusher this executor
   * created); returns the attempt that won the map.
   *
   * @param batchCounts the batches the attempt pushed per partition ({@link
   *     MapPusher#batchCounts}): if it wins, readers check that they read exactly these
   * @throws FaroException DATA_LOST when the generation it wrote was lost meanwhile: the task must
   *     fail, not report output that no reader will read
   */
  public int mapperEnd(
      HostPort lifecycle,
      ShuffleId shuffle,
      long stage,
      int mapId,
      int attemptId,
      int numMaps,
      int[] batchCounts) {
    return mapperEnd(lifecycle, shuffle, stage, mapId, attemptId, numMaps, batchCounts, false);
  }

  /**
   * As {@link #mapperEnd(HostPort, ShuffleId, long, int, int, int, int[])} for an attempt whose
   * output may be {@code incomplete} ({@link MapPusher#incomplete}): such an attempt never wins.
   */
  public int mapperEnd(
      HostPort lifecycle,
      ShuffleId shuffle,
      long stage,
      int mapId,
      int attemptId,
      int numMaps,
      int[] batchCounts,
      boolean incomplete) {
    ShuffleId faro = pushTargets(lifecycle, shuffle, stage, numMaps, -1).faroShuffle();
    MapperEndRequest.Builder request =
        MapperEndRequest.newBuilder()
            .setShuffleId(faro.shuffle())
            .setMapId(mapId)
            .setAttemptId(attemptId)
            .setNumMaps(numMaps)
            .setIncomplete(incomplete);
    for (int p = 0; p < batchCounts.length; p++) {
      if (batchCounts[p] > 0) {
        request.addBatchPartitions(p).addBatchCounts(batchCounts[p]);
      }
    }
    MapperEndResponse response =
        Futures.await(
            pool.call(lifecycle, request.build(), MapperEndResponse.class),
            settings.network().requestTimeout(),
            "map end of map " + mapId + " of shuffle " + faro);
    if (response.getGenerationLost()) {
      throw new FaroException(
          ErrorCode.DATA_LOST,
          "map "
              + mapId
              + " attempt "
              + attemptId
              + " wrote Faro shuffle "
              + faro
              + ", whose data was lost meanwhile: its stage runs again into a new generation");
    }
    return response.getWinningAttemptId();
  }

  /**
   * The committed files of the latest generation of {@code shuffle}; waits for the commit. Asks the
   * driver once per reading stage attempt ({@code readerStage}): a stage re-run after lost data
   * asks again and gets the new generation.
   */
  public ReducerFileGroups fileGroups(
      HostPort lifecycle, ShuffleId shuffle, int numMaps, long readerStage) {
    ReaderKey key = new ReaderKey(shuffle, readerStage);
    CompletableFuture<ReducerFileGroups> f =
        fileGroups.computeIfAbsent(
            key,
            k ->
                pool.call(
                        lifecycle,
                        GetReducerFileGroupsRequest.newBuilder()
                            .setShuffleId(shuffle.shuffle())
                            .setNumMaps(numMaps)
                            .build(),
                        GetReducerFileGroupsResponse.class,
                        settings.commitTimeout())
                    .thenApply(r -> ReducerFileGroups.fromProto(shuffle.app(), r)));
    return awaitCached(
        fileGroups, key, f, "committed files of shuffle " + shuffle + " from " + lifecycle);
  }

  public PartitionReader newReader(
      HostPort lifecycle,
      ShuffleId shuffle,
      int numMaps,
      int startPartition,
      int endPartition,
      int startMap,
      int endMap) {
    return newReader(
        lifecycle, shuffle, numMaps, startPartition, endPartition, startMap, endMap, 0);
  }

  public PartitionReader newReader(
      HostPort lifecycle,
      ShuffleId shuffle,
      int numMaps,
      int startPartition,
      int endPartition,
      int startMap,
      int endMap,
      long readerStage) {
    ReducerFileGroups groups = fileGroups(lifecycle, shuffle, numMaps, readerStage);
    return new PartitionReader(
        groups, startPartition, endPartition, startMap, endMap, pool, settings);
  }

  /**
   * Tells the driver that data of generation {@code faroShuffle} is lost; returns once the driver
   * had the engine forget the shuffle's map outputs.
   */
  public void reportLost(HostPort lifecycle, ShuffleId faroShuffle, int partition, String reason) {
    ReportShuffleLostRequest request =
        ReportShuffleLostRequest.newBuilder()
            .setFaroShuffleId(faroShuffle.shuffle())
            .setPartitionId(partition)
            .setReason(reason)
            .build();
    Futures.await(
        pool.call(lifecycle, request, EmptyResponse.class),
        settings.network().requestTimeout(),
        "reporting lost data of shuffle " + faroShuffle);
    fileGroups
        .entrySet()
        .removeIf(
            e ->
                e.getValue().isDone()
                    && !e.getValue().isCompletedExceptionally()
                    && e.getValue().join().faroShuffle().equals(faroShuffle));
  }

  /** Drops what this executor cached about engine shuffle number {@code shuffle} of any app. */
  public void forget(int shuffle) {
    pushTargets.keySet().removeIf(k -> k.engineShuffle().shuffle() == shuffle);
    fileGroups.keySet().removeIf(k -> k.engineShuffle().shuffle() == shuffle);
  }

  private <K, T> T awaitCached(
      Map<K, CompletableFuture<T>> cache, K key, CompletableFuture<T> f, String what) {
    java.time.Duration backstop =
        settings.commitTimeout().plus(settings.network().requestTimeout());
    try {
      // The call itself carries its timeout; this bound only guards against a lost completion.
      return Futures.await(f, backstop, what);
    } catch (RuntimeException e) {
      cache.remove(key, f); // let the next task ask again
      throw e;
    }
  }
}
