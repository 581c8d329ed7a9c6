package io.faro.client;

import static java.util.Objects.requireNonNull;

import io.faro.client.fetch.PartitionReader;
import io.faro.client.lifecycle.ReducerFileGroups;
import io.faro.common.id.IdMapper;
import io.faro.client.push.MapPusher;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.proto.GetPushLocationsRequest;
import io.faro.proto.GetPushLocationsResponse;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The executor side of Faro, one per executor process and shared by every task and shuffle: it
 * asks the driver's lifecycle manager where to push and what to read (caching both per
 * shuffle), and creates the per-task {@link MapPusher}s and {@link PartitionReader}s. Uses the
 * process's shared {@link ClientPool}, which it borrows. Thread-safe.
 */
public final class ShuffleClient {
  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final Map<ShuffleId, CompletableFuture<List<PartitionLocation>>> pushLocations = new ConcurrentHashMap<>();
  private final Map<ShuffleId, CompletableFuture<ReducerFileGroups>> fileGroups = new ConcurrentHashMap<>();

  public ShuffleClient(ClientPool pool, ClientOptions.Settings settings) {
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
  }

  public ClientOptions.Settings settings() {
    return settings;
  }

  /** Where each partition of {@code shuffle} takes pushes; asks the driver once per shuffle. */
  public List<PartitionLocation> pushLocations(HostPort lifecycle, ShuffleId shuffle, int numMaps, int numPartitions) {
    CompletableFuture<List<PartitionLocation>> f = pushLocations.computeIfAbsent(shuffle, s ->
        pool.call(lifecycle, GetPushLocationsRequest.newBuilder().setShuffleId(s.shuffle())
                .setNumMaps(numMaps).setNumPartitions(numPartitions).build(), GetPushLocationsResponse.class)
            .thenApply(r -> r.getLocationsList().stream().map(IdMapper::location).toList()));
    return awaitCached(pushLocations, shuffle, f, "push locations of shuffle " + shuffle + " from " + lifecycle);
  }

  public MapPusher newMapPusher(HostPort lifecycle, ShuffleId shuffle, int mapId, int attemptId,
      int numMaps, int numPartitions) {
    List<PartitionLocation> locations = pushLocations(lifecycle, shuffle, numMaps, numPartitions);
    return new MapPusher(shuffle, mapId, attemptId, locations, numPartitions, pool, settings,
        PooledByteBufAllocator.DEFAULT);
  }

  /** Reports a successful map attempt; returns the attempt that won the map. */
  public int mapperEnd(HostPort lifecycle, ShuffleId shuffle, int mapId, int attemptId, int numMaps) {
    MapperEndRequest request = MapperEndRequest.newBuilder().setShuffleId(shuffle.shuffle())
        .setMapId(mapId).setAttemptId(attemptId).setNumMaps(numMaps).build();
    return Futures.await(pool.call(lifecycle, request, MapperEndResponse.class),
        settings.network().requestTimeout(), "map end of map " + mapId + " of shuffle " + shuffle)
        .getWinningAttemptId();
  }

  /** The committed files of {@code shuffle}; waits for the commit, asks the driver once. */
  public ReducerFileGroups fileGroups(HostPort lifecycle, ShuffleId shuffle, int numMaps) {
    CompletableFuture<ReducerFileGroups> f = fileGroups.computeIfAbsent(shuffle, s ->
        pool.call(lifecycle, GetReducerFileGroupsRequest.newBuilder().setShuffleId(s.shuffle())
                .setNumMaps(numMaps).build(), GetReducerFileGroupsResponse.class, settings.commitTimeout())
            .thenApply(ReducerFileGroups::fromProto));
    return awaitCached(fileGroups, shuffle, f, "committed files of shuffle " + shuffle + " from " + lifecycle);
  }

  public PartitionReader newReader(HostPort lifecycle, ShuffleId shuffle, int numMaps,
      int startPartition, int endPartition, int startMap, int endMap) {
    ReducerFileGroups groups = fileGroups(lifecycle, shuffle, numMaps);
    return new PartitionReader(shuffle, groups, startPartition, endPartition, startMap, endMap, pool, settings);
  }

  /** Drops what this executor cached about shuffle number {@code shuffle} of any app. */
  public void forget(int shuffle) {
    pushLocations.keySet().removeIf(id -> id.shuffle() == shuffle);
    fileGroups.keySet().removeIf(id -> id.shuffle() == shuffle);
  }

  private <T> T awaitCached(Map<ShuffleId, CompletableFuture<T>> cache, ShuffleId shuffle,
      CompletableFuture<T> f, String what) {
    java.time.Duration backstop = settings.commitTimeout().plus(settings.network().requestTimeout());
    try {
      // The call itself carries its timeout; this bound only guards against a lost completion.
      return Futures.await(f, backstop, what);
    } catch (RuntimeException e) {
      cache.remove(shuffle, f); // let the next task ask again
      throw e;
    }
  }
}
