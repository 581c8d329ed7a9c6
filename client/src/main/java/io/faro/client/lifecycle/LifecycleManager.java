package io.faro.client.lifecycle;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.common.id.IdMapper;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.common.network.TransportServer;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.CommittedFileP;
import io.faro.proto.CommittedPartitionP;
import io.faro.proto.EmptyResponse;
import io.faro.proto.GetPushLocationsRequest;
import io.faro.proto.GetPushLocationsResponse;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ReserveSlotsResponse;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of Faro for one application: registers the app with the masters and keeps
 * it alive, places each shuffle when its first map task asks (slots from the master, reserved
 * on the workers), records the winning attempt of each map, commits the shuffle's files on the
 * workers when the last map ends, and tells reducers where the committed files are.
 *
 * <p>Threads: one RPC server for executors (bounded event loops) and one heartbeat thread,
 * whatever the number of shuffles or workers; all work is asynchronous on the shared {@link
 * ClientPool}. The pool is borrowed, not owned.
 */
public final class LifecycleManager implements RequestHandler, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);
  /** Rounds of placement before a shuffle's registration fails; each excludes the workers that failed. */
  private static final int PLACEMENT_ROUNDS = 3;
  /** Commits of one shuffle before it fails; only retryable failures are tried again. */
  private static final int COMMIT_ATTEMPTS = 3;

  private final AppId app;
  private final ClientOptions.Settings settings;
  private final ClientPool pool;
  private final MasterClient master;
  private final Map<Integer, ShuffleLifecycle> shuffles = new ConcurrentHashMap<>();
  private final TransportServer server;
  private final HostPort endpoint;
  private final ScheduledExecutorService heartbeat;

  /**
   * Registers {@code app} with the masters and starts serving executors.
   *
   * @throws FaroException CONNECTION_FAILED when no master can be reached: a job must never
   *     silently run without the shuffle service it was configured for
   */
  public LifecycleManager(AppId app, ClientOptions.Settings settings, ClientPool pool, String advertisedHost) {
    this.app = requireNonNull(app, "app is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.master = new MasterClient(pool, settings.masters(), settings.masterRetryTimeout(),
        settings.masterAttemptTimeout());
    try {
      master.callBlocking(RegisterAppRequest.newBuilder().setAppId(app.value()).build(), EmptyResponse.class);
    } catch (FaroException e) {
      throw new FaroException(e.code(),
          "Cannot register application " + app + " with the Faro cluster at " + settings.masters()
              + " (faro.master.endpoints, spark.faro.master.endpoints in Spark): " + e.getMessage(), e);
    }
    this.server = new TransportServer("faro-lifecycle", "0.0.0.0", settings.lifecyclePort(),
        settings.network(), this, null);
    this.endpoint = new HostPort(advertisedHost, server.port());
    this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "faro-app-heartbeat");
      t.setDaemon(true);
      return t;
    });
    long period = settings.appHeartbeatInterval().toMillis();
    heartbeat.scheduleWithFixedDelay(this::sendHeartbeat, period, period, TimeUnit.MILLISECONDS);
    LOG.info("Faro lifecycle manager for {} at {}, masters {}", app, endpoint, settings.masters());
  }

  public AppId app() {
    return app;
  }

  /** Where executors reach this lifecycle manager. */
  public HostPort endpoint() {
    return endpoint;
  }

  /** Heartbeats every master: each keeps the time, so a new leader knows the app is alive. */
  private void sendHeartbeat() {
    List<CompletableFuture<EmptyResponse>> answers =
        master.callEach(AppHeartbeatRequest.newBuilder().setAppId(app.value()).build(), EmptyResponse.class);
    CompletableFuture.allOf(answers.stream().map(a -> a.handle((r, e) -> e == null))
        .toArray(CompletableFuture[]::new)).thenRun(() -> {
          if (answers.stream().allMatch(CompletableFuture::isCompletedExceptionally)) {
            LOG.warn("App heartbeat for {} reached no master: {}", app,
                Futures.unwrap(answers.get(0).handle((r, e) -> e).join()).toString());
          }
        });
  }

  // ------------------------------------------------------------------ RPCs from executors

  @Override
  public void handle(Request request, Responder responder) {
    switch (request.type()) {
      case GET_PUSH_LOCATIONS_REQUEST -> pushLocations(request.meta(GetPushLocationsRequest.class), responder);
      case MAPPER_END_REQUEST -> mapperEnd(request.meta(MapperEndRequest.class), responder);
      case GET_REDUCER_FILE_GROUPS_REQUEST ->
          reducerFileGroups(request.meta(GetReducerFileGroupsRequest.class), responder);
      default -> responder.fail(ErrorCode.UNSUPPORTED_MESSAGE,
          "the lifecycle manager does not serve " + request.type());
    }
  }

  private ShuffleLifecycle shuffle(int shuffleId, int numMaps, int numPartitions) {
    ShuffleLifecycle s = shuffles.computeIfAbsent(shuffleId,
        id -> new ShuffleLifecycle(new ShuffleId(app, id), numMaps, numPartitions));
    if (s.numMaps() != numMaps || (numPartitions >= 0 && s.numPartitions() != numPartitions)) {
      throw new FaroException(ErrorCode.INVALID_REQUEST, "shuffle " + s.id() + " has " + s.numMaps()
          + " maps and " + s.numPartitions() + " partitions, request says " + numMaps + " and " + numPartitions);
    }
    return s;
  }

  private void pushLocations(GetPushLocationsRequest r, Responder responder) {
    ShuffleLifecycle s = shuffle(r.getShuffleId(), r.getNumMaps(), r.getNumPartitions());
    s.placement(() -> place(s)).whenComplete((locations, error) -> {
      if (error != null) {
        responder.fail(error);
        return;
      }
      GetPushLocationsResponse.Builder b = GetPushLocationsResponse.newBuilder();
      locations.forEach(l -> b.addLocations(IdMapper.toProto(l)));
      responder.respond(b.build());
    });
  }

  /**
   * Asks the master for slots, then reserves them on every chosen worker. A worker that cannot
   * reserve (unreachable, refusing) is replaced: its partitions are placed again, excluding every
   * worker that failed so far, for at most {@link #PLACEMENT_ROUNDS} rounds.
   */
  private CompletableFuture<List<PartitionLocation>> place(ShuffleLifecycle s) {
    return placeRound(s, List.of(), new HashSet<>(), new ArrayList<>(), 1);
  }

  private CompletableFuture<List<PartitionLocation>> placeRound(ShuffleLifecycle s, List<Integer> partitions,
      Set<WorkerId> excluded, List<PartitionLocation> placed, int round) {
    RequestSlotsRequest.Builder request = RequestSlotsRequest.newBuilder()
        .setShuffle(IdMapper.toProto(s.id()))
        .setNumPartitions(s.numPartitions())
        .addAllPartitionIds(partitions);
    excluded.forEach(w -> request.addExcludedWorkers(w.value()));
    return master.call(request.build(), RequestSlotsResponse.class).thenCompose(response -> {
      List<PartitionLocation> locations =
          response.getLocationsList().stream().map(IdMapper::location).toList();
      Map<WorkerId, List<PartitionLocation>> byWorker = groupByWorker(locations);
      Map<WorkerId, CompletableFuture<ReserveSlotsResponse>> reservations = new LinkedHashMap<>();
      byWorker.forEach((worker, locs) -> reservations.put(worker, reserve(s, worker, locs)));
      return CompletableFuture.allOf(reservations.values().stream()
              .map(f -> f.exceptionally(e -> null)).toArray(CompletableFuture[]::new))
          .thenCompose(v -> {
            List<Integer> retry = new ArrayList<>();
            List<String> failures = new ArrayList<>();
            reservations.forEach((worker, f) -> {
              if (f.isCompletedExceptionally()) {
                excluded.add(worker);
                byWorker.get(worker).forEach(l -> retry.add(l.partition()));
                failures.add(Futures.unwrap(f.handle((r, e) -> e).join()).getMessage());
              } else {
                placed.addAll(byWorker.get(worker));
              }
            });
            if (retry.isEmpty()) {
              LOG.info("Shuffle {} placed: {} partitions on {} workers", s.id(), placed.size(),
                  groupByWorker(placed).size());
              return CompletableFuture.completedFuture(List.copyOf(placed));
            }
            if (round >= PLACEMENT_ROUNDS) {
              return CompletableFuture.failedFuture(new FaroException(ErrorCode.RESERVE_FAILED,
                  "could not reserve " + retry.size() + " partitions of shuffle " + s.id() + " after "
                      + round + " rounds; last failures: " + failures));
            }
            LOG.warn("Shuffle {}: placing {} partitions again without workers {}: {}",
                s.id(), retry.size(), excluded, failures);
            return placeRound(s, retry, excluded, placed, round + 1);
          });
    });
  }

  private CompletableFuture<ReserveSlotsResponse> reserve(ShuffleLifecycle s, WorkerId worker,
      List<PartitionLocation> locs) {
    ReserveSlotsRequest.Builder b = ReserveSlotsRequest.newBuilder().setShuffle(IdMapper.toProto(s.id()));
    locs.forEach(l -> b.addLocations(IdMapper.toProto(l)));
    HostPort rpc = new HostPort(locs.get(0).endpoint().host(), locs.get(0).endpoint().rpcPort());
    return pool.call(rpc, b.build(), ReserveSlotsResponse.class).exceptionally(e -> {
      throw new FaroException(ErrorCode.RESERVE_FAILED, "worker " + worker + " at " + rpc
          + " did not reserve " + locs.size() + " partitions of shuffle " + s.id() + ": "
          + Futures.unwrap(e).getMessage(), Futures.unwrap(e));
    });
  }

  private static Map<WorkerId, List<PartitionLocation>> groupByWorker(List<PartitionLocation> locations) {
    Map<WorkerId, List<PartitionLocation>> byWorker = new LinkedHashMap<>();
    locations.forEach(l -> byWorker.computeIfAbsent(l.worker(), w -> new ArrayList<>()).add(l));
    return byWorker;
  }

  private void mapperEnd(MapperEndRequest r, Responder responder) {
    ShuffleLifecycle s = shuffle(r.getShuffleId(), r.getNumMaps(), -1);
    int winner = s.mapperEnd(r.getMapId(), r.getAttemptId(), this::commit);
    responder.respond(MapperEndResponse.newBuilder().setWinningAttemptId(winner).build());
  }

  /**
   * Flushes and closes the shuffle's files on every worker that holds some. Commit is
   * idempotent on the workers, so a retryable failure (a connection reset, a timeout) commits
   * again, up to {@link #COMMIT_ATTEMPTS} times.
   */
  private CompletableFuture<GetReducerFileGroupsResponse> commit(ShuffleLifecycle s) {
    return commitAttempt(s, 1);
  }

  private CompletableFuture<GetReducerFileGroupsResponse> commitAttempt(ShuffleLifecycle s, int attempt) {
    return commitOnce(s).handle((groups, error) -> {
      if (error == null) {
        return CompletableFuture.completedFuture(groups);
      }
      Throwable cause = Futures.unwrap(error);
      if (attempt >= COMMIT_ATTEMPTS || !(cause instanceof FaroException fe) || !fe.retryable()) {
        return CompletableFuture.<GetReducerFileGroupsResponse>failedFuture(cause);
      }
      LOG.warn("Commit of shuffle {} failed (attempt {} of {}), retrying: {}", s.id(), attempt,
          COMMIT_ATTEMPTS, cause.getMessage());
      return CompletableFuture.supplyAsync(() -> null,
              CompletableFuture.delayedExecutor(attempt, java.util.concurrent.TimeUnit.SECONDS))
          .thenCompose(v -> commitAttempt(s, attempt + 1));
    }).thenCompose(f -> f);
  }

  private CompletableFuture<GetReducerFileGroupsResponse> commitOnce(ShuffleLifecycle s) {
    return s.placementIfStarted().thenCompose(locations -> {
      Map<WorkerId, List<PartitionLocation>> byWorker = groupByWorker(locations);
      Map<WorkerId, CompletableFuture<CommitFilesResponse>> commits = new LinkedHashMap<>();
      byWorker.forEach((worker, locs) -> {
        HostPort rpc = new HostPort(locs.get(0).endpoint().host(), locs.get(0).endpoint().rpcPort());
        commits.put(worker, pool.call(rpc,
            CommitFilesRequest.newBuilder().setShuffle(IdMapper.toProto(s.id())).build(),
            CommitFilesResponse.class, settings.commitTimeout()));
      });
      return CompletableFuture.allOf(commits.values().toArray(CompletableFuture[]::new))
          .handle((v, error) -> fileGroups(s, byWorker, commits));
    });
  }

  private GetReducerFileGroupsResponse fileGroups(ShuffleLifecycle s,
      Map<WorkerId, List<PartitionLocation>> byWorker,
      Map<WorkerId, CompletableFuture<CommitFilesResponse>> commits) {
    GetReducerFileGroupsResponse.Builder b = GetReducerFileGroupsResponse.newBuilder();
    for (int w : s.winners()) {
      b.addWinningAttempts(w);
    }
    long bytes = 0;
    for (Map.Entry<WorkerId, CompletableFuture<CommitFilesResponse>> e : commits.entrySet()) {
      CommitFilesResponse response;
      try {
        response = e.getValue().join();
      } catch (RuntimeException ex) {
        Throwable cause = Futures.unwrap(ex);
        // Keep the cause's code: a timeout or a reset connection is worth another commit.
        throw new FaroException(cause instanceof FaroException fe ? fe.code() : ErrorCode.COMMIT_FAILED,
            "commit of shuffle " + s.id() + " on worker " + e.getKey() + " failed: " + cause.getMessage(), cause);
      }
      if (response.getFailedPartitionIdsCount() > 0) {
        throw new FaroException(ErrorCode.COMMIT_FAILED, "worker " + e.getKey() + " lost partitions "
            + response.getFailedPartitionIdsList() + " of shuffle " + s.id());
      }
      Map<Long, PartitionLocation> placed = new HashMap<>();
      byWorker.get(e.getKey()).forEach(l -> placed.put(key(l.partition(), l.epoch()), l));
      for (CommittedPartitionP c : response.getCommittedList()) {
        PartitionLocation location = placed.remove(key(c.getPartitionId(), c.getEpoch()));
        if (location != null && c.getBytes() > 0) {
          b.addFiles(CommittedFileP.newBuilder().setLocation(IdMapper.toProto(location))
              .setBytes(c.getBytes()).setChunks(c.getChunks()));
          bytes += c.getBytes();
        }
      }
      // Every placed location must come back committed: one the worker does not know any more
      // (it restarted, or expired the shuffle) held data that is gone. Reading on would
      // silently drop records.
      if (!placed.isEmpty()) {
        throw new FaroException(ErrorCode.COMMIT_FAILED, "worker " + e.getKey() + " did not commit "
            + placed.size() + " partitions of shuffle " + s.id() + " (for example partition "
            + placed.values().iterator().next().partition() + "): it no longer holds them, so their "
            + "data is lost (did the worker restart?)");
      }
    }
    LOG.info("Shuffle {} committed: {} files, {} bytes", s.id(), b.getFilesCount(), bytes);
    return b.build();
  }

  private static long key(int partition, int epoch) {
    return ((long) partition << 32) | (epoch & 0xffffffffL);
  }

  private void reducerFileGroups(GetReducerFileGroupsRequest r, Responder responder) {
    if (r.getNumMaps() == 0) {
      responder.respond(GetReducerFileGroupsResponse.getDefaultInstance());
      return;
    }
    ShuffleLifecycle s = shuffles.get(r.getShuffleId());
    if (s == null) {
      responder.fail(ErrorCode.UNKNOWN_SHUFFLE, "shuffle " + r.getShuffleId() + " of " + app
          + " was never written through this lifecycle manager (or was unregistered)");
      return;
    }
    s.committed().whenComplete((groups, error) -> {
      if (error != null) {
        responder.fail(error);
      } else {
        responder.respond(groups);
      }
    });
  }

  // ------------------------------------------------------------------ driver API

  /** Forgets the shuffle; the master frees its slots and the workers delete its files. */
  public void unregisterShuffle(int shuffleId) {
    ShuffleLifecycle s = shuffles.remove(shuffleId);
    if (s == null) {
      return;
    }
    master.call(UnregisterShuffleRequest.newBuilder().setShuffle(IdMapper.toProto(s.id())).build(),
        EmptyResponse.class).whenComplete((r, e) -> {
          if (e != null) {
            LOG.warn("Unregistering shuffle {} failed; the master frees it with the app: {}",
                s.id(), Futures.unwrap(e).toString());
          }
        });
  }

  @Override
  public void close() {
    heartbeat.shutdownNow();
    try {
      Futures.await(master.call(UnregisterAppRequest.newBuilder().setAppId(app.value()).build(),
          EmptyResponse.class), Duration.ofSeconds(10), "unregistering app " + app);
    } catch (FaroException e) {
      LOG.warn("Could not unregister app {}; the master expires it: {}", app, e.getMessage());
    }
    server.close();
    shuffles.clear();
  }
}
