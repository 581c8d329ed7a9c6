package io.faro.client;

import static java.util.Objects.requireNonNull;

import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.client.push.Targets;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

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
 *
 * <p>Over 400 lines because it owns both executor caches of a generation, push locations and
 * reducer file groups, with their page-by-page asks and the generation pin; each is small, and
 * splitting them would spread one invalidation rule ({@link #reportLost}, {@link #forget}).
 */
public final class ShuffleClient {
  /** Where the partitions of one generation take pushes; shared by this executor's tasks. */
  public record PushTargets(ShuffleId faroShuffle, Targets locations) {}

  private record WriterKey(ShuffleId engineShuffle, long stage) {}

  private record ReaderKey(ShuffleId engineShuffle, long readerStage) {}

  /**
   * The file groups one reading stage attempt asked for, by range of partitions, all of one
   * generation: the first answer pins it, and every later ask names it.
   */
  private static final class ReaderPages {
    final AtomicReference<Integer> generation = new AtomicReference<>();
    final Map<Long, CompletableFuture<ReducerFileGroups>> ranges = new ConcurrentHashMap<>();
  }

  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final Map<WriterKey, CompletableFuture<PushTargets>> pushTargets =
      new ConcurrentHashMap<>();
  private final Map<ReaderKey, ReaderPages> readers = new ConcurrentHashMap<>();

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
   * writes takes pushes; asks the driver once per shuffle and stage attempt. A shuffle of one page
   * gets every location with that first answer; a wider one gets each page's when a task first
   * pushes to it (see {@link Targets}).
   */
  public PushTargets pushTargets(
      HostPort lifecycle, ShuffleId shuffle, long stage, int numMaps, int numPartitions) {
    WriterKey key = new WriterKey(shuffle, stage);
    if (numPartitions < 0) {
      CompletableFuture<PushTargets> cached = pushTargets.get(key);
      if (cached != null) {
        return awaitCached(pushTargets, key, cached, "push locations of shuffle " + shuffle);
      }
      // A map's end on an executor that did not write it (its cache was dropped): the id only.
      GetPushLocationsResponse r =
          Futures.await(
              askLocations(lifecycle, shuffle, stage, numMaps, numPartitions, 0, 0),
              settings.network().requestTimeout(),
              "the generation of shuffle " + shuffle + " from " + lifecycle);
      ShuffleId faro = new ShuffleId(shuffle.app(), r.getFaroShuffleId());
      return new PushTargets(
          faro,
          new Targets(
              faro,
              0,
              settings.pages(),
              (a, b) -> CompletableFuture.completedFuture(List.of()),
              Duration.ZERO));
    }
    CompletableFuture<PushTargets> f =
        pushTargets.computeIfAbsent(
            key,
            k -> {
              int firstEnd = settings.pages().onePage(numPartitions) ? numPartitions : 0;
              return askLocations(lifecycle, shuffle, stage, numMaps, numPartitions, 0, firstEnd)
                  .thenApply(
                      r -> {
                        ShuffleId faro = new ShuffleId(shuffle.app(), r.getFaroShuffleId());
                        Targets targets =
                            new Targets(
                                faro,
                                numPartitions,
                                settings.pages(),
                                (start, end) ->
                                    pageOfLocations(
                                        lifecycle,
                                        shuffle,
                                        stage,
                                        numMaps,
                                        numPartitions,
                                        faro,
                                        start,
                                        end),
                                // Asking may place the page: as long as a revive may take.
                                settings.network().requestTimeout().multipliedBy(3).plusSeconds(5));
                        targets.known(0, firstEnd, locations(r));
                        return new PushTargets(faro, targets);
                      });
            });
    return awaitCached(
        pushTargets, key, f, "push locations of shuffle " + shuffle + " from " + lifecycle);
  }

  private CompletableFuture<GetPushLocationsResponse> askLocations(
      HostPort lifecycle,
      ShuffleId shuffle,
      long stage,
      int numMaps,
      int numPartitions,
      int start,
      int end) {
    // Asking may place partitions (slots from the masters, reserved on workers): as long as a
    // revive may take.
    return pool.call(
        lifecycle,
        GetPushLocationsRequest.newBuilder()
            .setShuffleId(shuffle.shuffle())
            .setNumMaps(numMaps)
            .setNumPartitions(numPartitions)
            .setStageId((int) (stage >>> 32))
            .setStageAttempt((int) stage)
            .setStartPartition(start)
            .setEndPartition(end)
            .build(),
        GetPushLocationsResponse.class,
        settings.network().requestTimeout().multipliedBy(3));
  }

  /** The locations of partitions [start, end) of generation {@code faro}. */
  private CompletableFuture<List<PartitionLocation>> pageOfLocations(
      HostPort lifecycle,
      ShuffleId shuffle,
      long stage,
      int numMaps,
      int numPartitions,
      ShuffleId faro,
      int start,
      int end) {
    return askLocations(lifecycle, shuffle, stage, numMaps, numPartitions, start, end)
        .thenApply(
            r -> {
              if (r.getFaroShuffleId() != faro.shuffle()) {
                throw new FaroException(
                    ErrorCode.INTERNAL,
                    "the lifecycle manager answered locations of Faro shuffle "
                        + r.getFaroShuffleId()
                        + " for a stage attempt that writes "
                        + faro);
              }
              return locations(r);
            });
  }

  private static List<PartitionLocation> locations(GetPushLocationsResponse r) {
    return r.getLocationsList().stream().map(IdMapper::location).toList();
  }

  /** The current push location of every partition (stage attempt 0); asks for every page. */
  public List<PartitionLocation> pushLocations(
      HostPort lifecycle, ShuffleId shuffle, int numMaps, int numPartitions) {
    Targets targets = pushTargets(lifecycle, shuffle, 0, numMaps, numPartitions).locations();
    List<PartitionLocation> result = new ArrayList<>(numPartitions);
    for (int p = 0; p < numPartitions; p++) {
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
    Duration timeout = settings.network().requestTimeout().multipliedBy(3);
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
   * The committed files of every partition of the latest generation of {@code shuffle}; waits for
   * the commit. Asks the driver once per reading stage attempt ({@code readerStage}): a stage
   * re-run after lost data asks again and gets the new generation.
   */
  public ReducerFileGroups fileGroups(
      HostPort lifecycle, ShuffleId shuffle, int numMaps, long readerStage) {
    ReaderPages reader =
        readers.computeIfAbsent(new ReaderKey(shuffle, readerStage), k -> new ReaderPages());
    return range(reader, lifecycle, shuffle, numMaps, 0, Integer.MAX_VALUE);
  }

  /**
   * The committed files of partitions [start, end) of {@code shuffle}, as {@link #fileGroups(
   * HostPort, ShuffleId, int, long)}: asked page by page, each page once per executor and reading
   * stage attempt, all of one generation.
   */
  public ReducerFileGroups fileGroups(
      HostPort lifecycle, ShuffleId shuffle, int numMaps, long readerStage, int start, int end) {
    PartitionPages pages = settings.pages();
    // One entry for the whole call: its pages are all of the generation it pinned.
    ReaderPages reader =
        readers.computeIfAbsent(new ReaderKey(shuffle, readerStage), k -> new ReaderPages());
    if (start >= end) {
      return range(reader, lifecycle, shuffle, numMaps, start, start);
    }
    List<ReducerFileGroups> parts = new ArrayList<>();
    for (int page = pages.page(start); page <= pages.page(end - 1); page++) {
      long pageEnd = (long) pages.start(page) + pages.size();
      parts.add(
          range(
              reader,
              lifecycle,
              shuffle,
              numMaps,
              pages.start(page),
              (int) Math.min(Integer.MAX_VALUE, pageEnd)));
    }
    try {
      return ReducerFileGroups.combine(parts);
    } catch (IllegalArgumentException e) {
      throw new FaroException(ErrorCode.INTERNAL, e.getMessage(), e);
    }
  }

  private ReducerFileGroups range(
      ReaderPages reader, HostPort lifecycle, ShuffleId shuffle, int numMaps, int start, int end) {
    long key = ((long) start << 32) | (end & 0xffffffffL);
    CompletableFuture<ReducerFileGroups> f =
        reader.ranges.computeIfAbsent(
            key,
            k ->
                askFiles(lifecycle, shuffle, numMaps, start, end, reader.generation.get())
                    .thenCompose(
                        r -> {
                          // The first answer pins the generation; one of another generation
                          // (asked before the pin, answered after it) is asked again, pinned.
                          reader.generation.compareAndSet(null, r.getFaroShuffleId());
                          Integer pinned = reader.generation.get();
                          if (numMaps == 0 || pinned == r.getFaroShuffleId()) {
                            return CompletableFuture.completedFuture(r);
                          }
                          return askFiles(lifecycle, shuffle, numMaps, start, end, pinned);
                        })
                    .thenApply(r -> ReducerFileGroups.fromProto(shuffle.app(), r)));
    return awaitCached(
        reader.ranges,
        key,
        f,
        "committed files of partitions "
            + start
            + ".."
            + (end == Integer.MAX_VALUE ? "" : String.valueOf(end - 1))
            + " of shuffle "
            + shuffle
            + " from "
            + lifecycle);
  }

  private CompletableFuture<GetReducerFileGroupsResponse> askFiles(
      HostPort lifecycle, ShuffleId shuffle, int numMaps, int start, int end, Integer generation) {
    GetReducerFileGroupsRequest.Builder request =
        GetReducerFileGroupsRequest.newBuilder()
            .setShuffleId(shuffle.shuffle())
            .setNumMaps(numMaps)
            .setStartPartition(start)
            .setEndPartition(end);
    if (generation != null) {
      request.setFaroShuffleId(generation);
    }
    return pool.call(
        lifecycle, request.build(), GetReducerFileGroupsResponse.class, settings.commitTimeout());
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
    ReducerFileGroups groups =
        fileGroups(lifecycle, shuffle, numMaps, readerStage, startPartition, endPartition);
    if (!groups.covers(startPartition, endPartition)) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "partitions "
              + startPartition
              + ".."
              + (endPartition - 1)
              + " asked of shuffle "
              + shuffle
              + ", which has fewer");
    }
    long[] rangeExpected =
        startMap <= 0 && endMap >= groups.numMaps()
            ? null
            : mapRangeBatches(
                lifecycle, shuffle, groups, startPartition, endPartition, startMap, endMap);
    return new PartitionReader(
        groups, startPartition, endPartition, startMap, endMap, rangeExpected, pool, settings);
  }

  /**
   * For a reader of maps [startMap, endMap) only: the batches their winning attempts pushed to each
   * partition of [start, end), from the driver (one small request per such reader, as Spark's skew
   * splits and local readers are few), so that a missing batch is DATA_LOST on the skew path as on
   * the full one. Null when the driver does not count (an older one): not checked.
   */
  private long[] mapRangeBatches(
      HostPort lifecycle,
      ShuffleId shuffle,
      ReducerFileGroups groups,
      int start,
      int end,
      int startMap,
      int endMap) {
    GetReducerFileGroupsRequest request =
        GetReducerFileGroupsRequest.newBuilder()
            .setShuffleId(shuffle.shuffle())
            .setNumMaps(groups.numMaps())
            .setStartPartition(start)
            .setEndPartition(end)
            .setFaroShuffleId(groups.faroShuffle().shuffle())
            .setBatchCountsOnly(true)
            .setStartMap(Math.max(0, startMap))
            .setEndMap(Math.min(groups.numMaps(), endMap))
            .build();
    GetReducerFileGroupsResponse counts =
        Futures.await(
            pool.call(
                lifecycle, request, GetReducerFileGroupsResponse.class, settings.commitTimeout()),
            settings.commitTimeout().plus(settings.network().requestTimeout()),
            "batch counts of maps "
                + startMap
                + ".."
                + (endMap - 1)
                + " of partitions "
                + start
                + ".."
                + (end - 1)
                + " of shuffle "
                + groups.faroShuffle()
                + " from "
                + lifecycle);
    if (counts.getExpectedBatchesCount() == 0 && end > start) {
      return null;
    }
    if (counts.getExpectedBatchesCount() != end - start) {
      throw new FaroException(
          ErrorCode.INTERNAL,
          "the driver counted batches of "
              + counts.getExpectedBatchesCount()
              + " partitions for a reader of "
              + (end - start));
    }
    return counts.getExpectedBatchesList().stream().mapToLong(Long::longValue).toArray();
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
    readers
        .entrySet()
        .removeIf(
            e ->
                e.getKey().engineShuffle().app().equals(faroShuffle.app())
                    && Integer.valueOf(faroShuffle.shuffle())
                        .equals(e.getValue().generation.get()));
  }

  /** Drops what this executor cached about engine shuffle number {@code shuffle} of any app. */
  public void forget(int shuffle) {
    pushTargets.keySet().removeIf(k -> k.engineShuffle().shuffle() == shuffle);
    readers.keySet().removeIf(k -> k.engineShuffle().shuffle() == shuffle);
  }

  private <K, T> T awaitCached(
      Map<K, CompletableFuture<T>> cache, K key, CompletableFuture<T> f, String what) {
    Duration backstop = settings.commitTimeout().plus(settings.network().requestTimeout());
    try {
      // The call itself carries its timeout; this bound only guards against a lost completion.
      return Futures.await(f, backstop, what);
    } catch (RuntimeException e) {
      cache.remove(key, f); // let the next task ask again
      throw e;
    }
  }
}
