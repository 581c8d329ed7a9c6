package io.faro.client.lifecycle;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.client.ShuffleClient;
import io.faro.common.id.IdMapper;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.log.LogSafe;
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
import io.faro.proto.ReportShuffleLostRequest;
import io.faro.proto.RevivePartitionP;
import io.faro.proto.ReviveRequest;
import io.faro.proto.ReviveResponse;
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
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
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
 *
 * <p>Over 400 lines, knowingly: app session, placement and revive, commit, generations and the stage-end check part into their own classes in the issue "Room to grow", taken next.
 */
public final class LifecycleManager implements RequestHandler, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);
  /** Rounds of placement before a shuffle's registration fails; each excludes the workers that failed. */
  private static final int PLACEMENT_ROUNDS = 3;
  /**
   * Most maps or partitions of one shuffle (4,194,304): a generation holds arrays of both, so the
   * bound caps what one executor request can make the driver allocate (well above the masters'
   * faro.master.max.partitions.per.shuffle default).
   */
  static final int MAX_SHAPE = 1 << 22;
  /** Most locations in one ReserveSlots request: below every worker's faro.worker.reserve.max.locations default. */
  static final int RESERVE_BATCH = 50_000;
  /** Commits of one shuffle before it fails; only retryable failures are tried again. */
  private static final int COMMIT_ATTEMPTS = 3;

  private final AppId app;
  private final ClientOptions.Settings settings;
  private final ClientPool pool;
  private final MasterClient master;
  /** Generations of each engine shuffle, oldest first; guarded by itself. */
  private final Map<Integer, List<ShuffleLifecycle>> generations = new HashMap<>();
  /** Every generation by Faro's shuffle id. */
  private final Map<Integer, ShuffleLifecycle> shuffles = new ConcurrentHashMap<>();
  private final AtomicInteger nextShuffleId = new AtomicInteger();
  /** Workers that failed a push or a reservation recently, with the time: revives avoid them for a while. */
  private final Map<WorkerId, Long> recentlyFailed = new ConcurrentHashMap<>();
  private volatile IntConsumer onShuffleLost = id -> { };
  private final TransportServer server;
  private final HostPort endpoint;
  private final ScheduledExecutorService heartbeat;
  private final CommitWatch commitWatch;

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
        ClientOptions.LIFECYCLE_PORT.key() + " (spark.faro.client.lifecycle.port in Spark)", settings.network(),
        this, null);
    this.endpoint = new HostPort(advertisedHost, server.port());
    this.commitWatch = new CommitWatch(master, settings.appHeartbeatInterval().toNanos());
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

  /**
   * Heartbeats every master: each keeps the time, so a new leader knows the app is alive. Then
   * asks about the workers of commits that wait (see {@link CommitWatch}).
   */
  private void sendHeartbeat() {
    commitWatch.check();
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
      case REVIVE_REQUEST -> revive(request.meta(ReviveRequest.class), responder);
      case REPORT_SHUFFLE_LOST_REQUEST -> reportLost(request.meta(ReportShuffleLostRequest.class), responder);
      default -> responder.fail(ErrorCode.UNSUPPORTED_MESSAGE,
          "the lifecycle manager does not serve " + request.type());
    }
  }

  /**
   * The generation a map task of stage {@code stageId} attempt {@code stageAttempt} writes. A
   * stage attempt always writes the generation it wrote first (zombie tasks of a retried stage
   * keep writing theirs, which nobody reads). A stage attempt new to this shuffle writes the
   * latest generation, unless that one is lost or already committed: then it gets a new
   * generation (a new Faro shuffle id), so that a re-run's data never mixes with the old. Stages are told apart by id
   * and attempt: a later job's new stage object re-running a skipped stage numbers its attempts
   * from 0 again.
   */
  private ShuffleLifecycle writerGeneration(int engineShuffle, int stageId, int stageAttempt, int numMaps,
      int numPartitions) {
    // Before anything proportional to them is allocated (arrays per map and per partition).
    // A negative partition count means "as known" (a map's end names none).
    if (numMaps < 0 || numMaps > MAX_SHAPE || numPartitions > MAX_SHAPE) {
      throw new FaroException(ErrorCode.LIMIT_EXCEEDED, "shuffle " + engineShuffle + " of " + app + " asks for "
          + numMaps + " maps and " + numPartitions + " partitions; each must be in 0.." + MAX_SHAPE);
    }
    long stageKey = ShuffleClient.stageKey(stageId, stageAttempt);
    ShuffleLifecycle s = null;
    synchronized (generations) {
      List<ShuffleLifecycle> list = generations.computeIfAbsent(engineShuffle, id -> new ArrayList<>());
      for (int i = list.size() - 1; i >= 0 && s == null; i--) {
        if (list.get(i).writtenBy(stageKey)) {
          s = list.get(i);
        }
      }
      ShuffleLifecycle latest = list.isEmpty() ? null : list.get(list.size() - 1);
      if (s == null && latest != null && !latest.lost() && !latest.commitStarted()) {
        s = latest;
      }
      if (s == null && latest != null && !latest.lost()) {
        // Every map of the latest generation ended, yet a new stage attempt runs maps of it: the
        // engine dropped outputs Faro still holds (Spark rolls back the stages after an
        // indeterminate one, e.g. after a repartition, and runs them again whole). Its new
        // output must not meet the old: a new generation, never the committed one.
        LOG.info("Stage {} attempt {} runs maps of shuffle {} whose generation {} is already committed: the "
            + "engine re-runs it, so it writes a new generation", stageId, stageAttempt, engineShuffle, latest.id());
      }
      if (s == null && numPartitions <= 0) {
        throw new FaroException(ErrorCode.INVALID_REQUEST, "shuffle " + engineShuffle + " of " + app
            + " is not written yet and the request gives no partition count");
      }
      if (s == null) {
        s = new ShuffleLifecycle(engineShuffle, new ShuffleId(app, nextShuffleId.getAndIncrement()), numMaps,
            numPartitions);
        list.add(s);
        shuffles.put(s.id().shuffle(), s);
        LOG.info("Shuffle {} of {} is written as Faro shuffle {} (generation {}, stage {} attempt {})",
            engineShuffle, app, s.id(), list.size() - 1, stageId, stageAttempt);
      }
      s.addWriter(stageKey);
    }
    checkShape(s, numMaps, numPartitions);
    return s;
  }

  private static void checkShape(ShuffleLifecycle s, int numMaps, int numPartitions) {
    if (s.numMaps() != numMaps || (numPartitions >= 0 && s.numPartitions() != numPartitions)) {
      throw new FaroException(ErrorCode.INVALID_REQUEST, "shuffle " + s.id() + " has " + s.numMaps()
          + " maps and " + s.numPartitions() + " partitions, request says " + numMaps + " and " + numPartitions);
    }
  }

  /** The generation with Faro id {@code shuffleId}. */
  private ShuffleLifecycle generation(int shuffleId) {
    ShuffleLifecycle s = shuffles.get(shuffleId);
    if (s == null) {
      throw new FaroException(ErrorCode.UNKNOWN_SHUFFLE, "Faro shuffle " + shuffleId + " of " + app
          + " is not known to this lifecycle manager (never written, or unregistered)");
    }
    return s;
  }

  /** The newest generation of an engine shuffle, the one readers read. */
  private ShuffleLifecycle latestGeneration(int engineShuffle) {
    synchronized (generations) {
      List<ShuffleLifecycle> list = generations.get(engineShuffle);
      return list == null || list.isEmpty() ? null : list.get(list.size() - 1);
    }
  }

  private void pushLocations(GetPushLocationsRequest r, Responder responder) {
    ShuffleLifecycle s = writerGeneration(r.getShuffleId(), r.getStageId(), r.getStageAttempt(), r.getNumMaps(),
        r.getNumPartitions());
    s.placement(() -> place(s)).whenComplete((placed, error) -> {
      if (error != null) {
        responder.fail(error);
        return;
      }
      GetPushLocationsResponse.Builder b = GetPushLocationsResponse.newBuilder().setFaroShuffleId(s.id().shuffle());
      s.currentLocations().forEach(l -> b.addLocations(IdMapper.toProto(l)));
      responder.respond(b.build());
    });
  }

  /**
   * Asks the master for slots, then reserves them on every chosen worker. A worker that cannot
   * reserve (unreachable, refusing) is replaced: its partitions are placed again, under a new
   * epoch and excluding every worker that failed so far, for at most {@link #PLACEMENT_ROUNDS}
   * rounds.
   */
  private CompletableFuture<List<PartitionLocation>> place(ShuffleLifecycle s) {
    return placeRound(s, List.of(), new HashSet<>(), Set.of(), new ArrayList<>(), 1, 0);
  }

  /**
   * One round of placement: {@code excluded} workers get nothing (they failed to reserve);
   * {@code avoided} ones get partitions only when the others cannot take them.
   */
  private CompletableFuture<List<PartitionLocation>> placeRound(ShuffleLifecycle s, List<Integer> partitions,
      Set<WorkerId> excluded, Set<WorkerId> avoided, List<PartitionLocation> placed, int round, int epoch) {
    RequestSlotsRequest.Builder request = RequestSlotsRequest.newBuilder()
        .setShuffle(IdMapper.toProto(s.id()))
        .setNumPartitions(s.numPartitions())
        .addAllPartitionIds(partitions)
        .setEpoch(epoch)
        .setReplicate(settings.replicate())
        // The same on every retry of this call (the master client resends this message).
        .setRequestId(java.util.UUID.randomUUID().toString());
    excluded.forEach(w -> request.addExcludedWorkers(w.value()));
    avoided.forEach(w -> request.addAvoidedWorkers(w.value()));
    return master.call(request.build(), RequestSlotsResponse.class).thenCompose(response -> {
      List<PartitionLocation> locations =
          response.getLocationsList().stream().map(IdMapper::location).toList();
      // Primaries and replicas alike: a location is placed only once every copy is reserved.
      Map<WorkerId, List<PartitionLocation>> byWorker = groupCopiesByWorker(locations);
      Map<WorkerId, CompletableFuture<ReserveSlotsResponse>> reservations = new LinkedHashMap<>();
      byWorker.forEach((worker, locs) -> reservations.put(worker, reserve(s, worker, locs)));
      return CompletableFuture.allOf(reservations.values().stream()
              .map(f -> f.exceptionally(e -> null)).toArray(CompletableFuture[]::new))
          .thenCompose(v -> {
            Set<WorkerId> failed = new HashSet<>();
            List<String> failures = new ArrayList<>();
            reservations.forEach((worker, f) -> {
              if (f.isCompletedExceptionally()) {
                failed.add(worker);
                failures.add(Futures.unwrap(f.handle((r, e) -> e).join()).getMessage());
              }
            });
            List<Integer> retry = new ArrayList<>();
            for (PartitionLocation l : locations) {
              if (l.copies().stream().anyMatch(c -> failed.contains(c.worker()))) {
                retry.add(l.partition());
              } else {
                placed.add(l);
              }
            }
            if (retry.isEmpty()) {
              LOG.info("Shuffle {} placed: {} partitions (epoch {}) on {} workers{}", s.id(), placed.size(), epoch,
                  groupCopiesByWorker(placed).size(), settings.replicate() ? ", replicated" : "");
              return CompletableFuture.completedFuture(List.copyOf(placed));
            }
            excluded.addAll(failed);
            long now = System.currentTimeMillis();
            failed.forEach(w -> recentlyFailed.put(w, now));
            if (round >= PLACEMENT_ROUNDS) {
              return CompletableFuture.failedFuture(new FaroException(ErrorCode.RESERVE_FAILED,
                  "could not reserve " + retry.size() + " partitions of shuffle " + s.id() + " after "
                      + round + " rounds; last failures: " + failures));
            }
            LOG.warn("Shuffle {}: placing {} partitions again without workers {}: {}",
                s.id(), retry.size(), excluded, failures);
            // A new epoch: a worker that did reserve keeps its (now unused, empty) location.
            return placeRound(s, retry, excluded, avoided, placed, round + 1, s.newEpoch());
          });
    });
  }

  private CompletableFuture<ReserveSlotsResponse> reserve(ShuffleLifecycle s, WorkerId worker,
      List<PartitionLocation> locs) {
    HostPort rpc = new HostPort(locs.get(0).endpoint().host(), locs.get(0).endpoint().rpcPort());
    // In requests of at most RESERVE_BATCH locations: a worker refuses larger ones
    // (faro.worker.reserve.max.locations), whatever the number of partitions of the shuffle.
    List<CompletableFuture<ReserveSlotsResponse>> parts = new ArrayList<>();
    for (int from = 0; from < locs.size(); from += RESERVE_BATCH) {
      ReserveSlotsRequest.Builder b = ReserveSlotsRequest.newBuilder().setShuffle(IdMapper.toProto(s.id()))
          .setOwnerToken(s.ownerToken());
      locs.subList(from, Math.min(locs.size(), from + RESERVE_BATCH)).forEach(l -> b.addLocations(IdMapper.toProto(l)));
      parts.add(pool.call(rpc, b.build(), ReserveSlotsResponse.class));
    }
    return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
        .thenApply(done -> ReserveSlotsResponse.getDefaultInstance())
        .exceptionally(e -> {
          throw new FaroException(ErrorCode.RESERVE_FAILED, "worker " + worker + " at " + rpc
              + " did not reserve " + locs.size() + " partitions of shuffle " + s.id() + ": "
              + Futures.unwrap(e).getMessage(), Futures.unwrap(e));
        });
  }

  /** Every copy (primaries with their replica, replicas on their own) by the worker that holds it. */
  private static Map<WorkerId, List<PartitionLocation>> groupCopiesByWorker(List<PartitionLocation> locations) {
    Map<WorkerId, List<PartitionLocation>> byWorker = new LinkedHashMap<>();
    for (PartitionLocation l : locations) {
      for (PartitionLocation copy : l.copies()) {
        byWorker.computeIfAbsent(copy.worker(), w -> new ArrayList<>()).add(copy);
      }
    }
    return byWorker;
  }

  // ------------------------------------------------------------------ revive

  /** How long a worker that failed a push is left out of revives of the app's shuffles. */
  private static final long FAILED_WORKER_MILLIS = 60_000;

  /**
   * New locations for partitions whose push failed. A partition already moved past the failed
   * epoch gets its current location; one being revived by another task shares that revive; the
   * rest are placed together, under one new epoch, avoiding the workers that failed recently.
   */
  private void revive(ReviveRequest r, Responder responder) {
    ShuffleLifecycle s = generation(r.getShuffleId());
    if (s.commitStarted()) {
      responder.fail(ErrorCode.INVALID_REQUEST, "every map of shuffle " + s.id() + " has ended and its "
          + "files are committed: this task is a losing attempt and its data is not needed");
      return;
    }
    long now = System.currentTimeMillis();
    for (RevivePartitionP p : r.getPartitionsList()) {
      if (!p.getFailedWorker().isEmpty()) {
        recentlyFailed.put(new WorkerId(p.getFailedWorker()), now);
      }
    }
    recentlyFailed.values().removeIf(t -> now - t > FAILED_WORKER_MILLIS);
    List<Integer> toPlace = new ArrayList<>();
    Map<Integer, CompletableFuture<PartitionLocation>> created = new HashMap<>();
    List<CompletableFuture<PartitionLocation>> answers = new ArrayList<>();
    for (RevivePartitionP p : r.getPartitionsList()) {
      answers.add(s.revive(p.getPartitionId(), p.getEpoch(), toPlace,
          partition -> created.computeIfAbsent(partition, x -> new CompletableFuture<>())));
    }
    // Partitions leave the worker they are on (it failed, or their file there is full enough):
    // one placement per current worker, which that placement avoids.
    Map<WorkerId, List<Integer>> byCurrentWorker = new LinkedHashMap<>();
    for (int partition : toPlace) {
      PartitionLocation at = s.currentLocation(partition);
      WorkerId worker = at == null ? new WorkerId("-") : at.worker();
      byCurrentWorker.computeIfAbsent(worker, w -> new ArrayList<>()).add(partition);
    }
    byCurrentWorker.forEach((worker, partitions) -> {
      int epoch = s.newEpoch();
      Set<WorkerId> avoid = new HashSet<>(recentlyFailed.keySet());
      avoid.add(worker);
      LOG.info("Shuffle {}: moving {} partitions off worker {} to epoch {}, avoiding {}", s.id(), partitions.size(),
          worker, epoch, avoid);
      placeRound(s, partitions, new HashSet<>(), avoid, new ArrayList<>(), 1, epoch)
          .whenComplete((placed, error) ->
              s.revived(partitions, placed, error == null ? null : Futures.unwrap(error), created));
    });
    CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).whenComplete((v, error) -> {
      if (error != null) {
        responder.fail(Futures.unwrap(error));
        return;
      }
      ReviveResponse.Builder b = ReviveResponse.newBuilder();
      answers.forEach(a -> b.addLocations(IdMapper.toProto(a.join())));
      responder.respond(b.build());
    });
  }

  private void mapperEnd(MapperEndRequest r, Responder responder) {
    ShuffleLifecycle s = generation(r.getShuffleId());
    checkShape(s, r.getNumMaps(), -1);
    BatchCounts batches = BatchCounts.of(r.getBatchPartitionsList(), r.getBatchCountsList());
    int winner = s.mapperEnd(r.getMapId(), r.getAttemptId(), batches, r.getIncomplete(), this::commit);
    responder.respond(MapperEndResponse.newBuilder().setWinningAttemptId(winner).setGenerationLost(s.lost()).build());
  }

  /**
   * A reducer found data of a generation lost on every copy: the engine forgets the map outputs of
   * the shuffle (so its next stage attempt writes a new generation) before the reducer is answered
   * and fails its task.
   */
  private void reportLost(ReportShuffleLostRequest r, Responder responder) {
    ShuffleLifecycle s = generation(r.getFaroShuffleId());
    if (s.markLost()) {
      LOG.warn("Shuffle {} (generation of shuffle {}) lost data of partition {}: {}; its map stage runs again",
          s.id(), s.engineShuffleId(), r.getPartitionId(), LogSafe.text(r.getReason()));
      RuntimeException error = forgetMapOutputs(s);
      if (error != null) {
        responder.fail(error);
        return;
      }
    }
    responder.respond(EmptyResponse.getDefaultInstance());
  }

  /**
   * The engine finished map stage attempt {@code stageAttempt} of stage {@code stageId} with
   * success. A task reports mapper end before its success, so every map of the generation that
   * attempt wrote has ended by now, unless the engine took some map's output from a task of an
   * older, lost generation (a zombie that finished while that generation was being lost, whose
   * output the engine registered after it forgot the others). That generation can then never
   * commit, and its readers would wait for it until faro.client.commit.timeout: it is lost at
   * once instead, the engine forgets the shuffle's map outputs, and the readers are answered with
   * every partition lost, so that the map stage runs again, whole.
   */
  public void stageAttemptEnded(int stageId, int stageAttempt) {
    long stageKey = ShuffleClient.stageKey(stageId, stageAttempt);
    for (ShuffleLifecycle s : shuffles.values()) {
      if (!s.writtenBy(stageKey) || !s.loseIfIncomplete()) {
        continue;
      }
      int[] winners = s.winners();
      List<Integer> missing = new ArrayList<>();
      for (int m = 0; m < winners.length; m++) {
        if (winners[m] < 0) {
          missing.add(m);
        }
      }
      LOG.warn("Stage {} attempt {} ended but maps {} of shuffle {} (generation of shuffle {}) never ended in it: "
          + "the engine kept their output from a lost generation; the map stage runs again", stageId, stageAttempt,
          missing.size() > 10 ? missing.subList(0, 10) + "..." : missing, s.id(), s.engineShuffleId());
      forgetMapOutputs(s);
      GetReducerFileGroupsResponse.Builder b = fileGroupsOf(s, winners);
      for (int p = 0; p < s.numPartitions(); p++) {
        b.addLostPartitionIds(p);
      }
      s.abandon(b.build());
    }
  }

  /** Has the engine forget the map outputs of {@code s}'s shuffle; returns its error, or null. */
  private RuntimeException forgetMapOutputs(ShuffleLifecycle s) {
    try {
      onShuffleLost.accept(s.engineShuffleId());
      return null;
    } catch (RuntimeException e) {
      LOG.error("The engine could not forget the map outputs of shuffle {}", s.engineShuffleId(), e);
      return e;
    }
  }

  /** File groups of generation {@code s} with its maps' {@code winners}, to be filled in. */
  private static GetReducerFileGroupsResponse.Builder fileGroupsOf(ShuffleLifecycle s, int[] winners) {
    GetReducerFileGroupsResponse.Builder b = GetReducerFileGroupsResponse.newBuilder()
        .setFaroShuffleId(s.id().shuffle());
    for (int w : winners) {
      b.addWinningAttempts(w);
    }
    return b;
  }

  /** Hears the engine shuffle id of every generation reported lost (the engine re-runs its maps). */
  public void onShuffleLost(IntConsumer listener) {
    this.onShuffleLost = requireNonNull(listener, "listener is null");
  }

  /**
   * Flushes and closes the shuffle's files on every worker that holds a copy of some location.
   * Commit is idempotent on the workers, so a retryable failure (a connection reset, a timeout) is
   * tried again on that worker, up to {@link #COMMIT_ATTEMPTS} times. A worker that still fails
   * loses only its copies: a partition is lost when some epoch of it has no committed copy, and
   * its reducers then fail with DATA_LOST (the engine re-runs the map stage); the others read.
   */
  private CompletableFuture<GetReducerFileGroupsResponse> commit(ShuffleLifecycle s) {
    return s.placementIfStarted().handle((placed, error) -> null).thenCompose(v -> {
      List<PartitionLocation> locations = s.allLocations();
      Map<WorkerId, List<PartitionLocation>> byWorker = groupCopiesByWorker(locations);
      Map<WorkerId, CompletableFuture<CommitFilesResponse>> commits = new LinkedHashMap<>();
      byWorker.forEach((worker, locs) -> {
        HostPort rpc = new HostPort(locs.get(0).endpoint().host(), locs.get(0).endpoint().rpcPort());
        CompletableFuture<CommitFilesResponse> commit =
            commitOn(s, worker, rpc, 1, System.nanoTime() + settings.commitTimeout().toNanos());
        commits.put(worker, commit);
        commitWatch.watch(s.id(), worker, commit);
      });
      return CompletableFuture.allOf(commits.values().stream().map(f -> f.exceptionally(e -> null))
              .toArray(CompletableFuture[]::new))
          .thenApply(done -> fileGroups(s, locations, commits));
    });
  }

  /**
   * Commits on one worker, retrying what is retryable until {@code deadlineNanos}: all attempts
   * together take at most faro.client.commit.timeout, the time readers wait for the commit, so a
   * hung worker's copies are given up on before the readers give up on the whole shuffle.
   */
  private CompletableFuture<CommitFilesResponse> commitOn(ShuffleLifecycle s, WorkerId worker, HostPort rpc,
      int attempt, long deadlineNanos) {
    Duration left = Duration.ofNanos(Math.max(1_000_000, deadlineNanos - System.nanoTime()));
    return pool.call(rpc, CommitFilesRequest.newBuilder().setShuffle(IdMapper.toProto(s.id()))
            .setOwnerToken(s.ownerToken()).build(),
            CommitFilesResponse.class, left)
        .handle((response, error) -> {
          if (error == null) {
            return CompletableFuture.completedFuture(response);
          }
          Throwable cause = Futures.unwrap(error);
          boolean timeLeft = deadlineNanos - System.nanoTime() > TimeUnit.SECONDS.toNanos(attempt);
          if (attempt >= COMMIT_ATTEMPTS || !timeLeft || !(cause instanceof FaroException fe) || !fe.retryable()) {
            LOG.warn("Commit of shuffle {} on worker {} failed ({} attempts): {}", s.id(), worker, attempt,
                cause.getMessage());
            return CompletableFuture.<CommitFilesResponse>failedFuture(cause);
          }
          LOG.warn("Commit of shuffle {} on worker {} failed (attempt {} of {}), retrying: {}", s.id(), worker,
              attempt, COMMIT_ATTEMPTS, cause.getMessage());
          return CompletableFuture.supplyAsync(() -> null,
                  CompletableFuture.delayedExecutor(attempt, TimeUnit.SECONDS))
              .thenCompose(x -> commitOn(s, worker, rpc, attempt + 1, deadlineNanos));
        }).thenCompose(f -> f);
  }

  private GetReducerFileGroupsResponse fileGroups(ShuffleLifecycle s, List<PartitionLocation> locations,
      Map<WorkerId, CompletableFuture<CommitFilesResponse>> commits) {
    GetReducerFileGroupsResponse.Builder b = fileGroupsOf(s, s.winners());
    for (long expected : s.expectedBatches()) {
      b.addExpectedBatches(expected);
    }
    // What each worker committed, by (partition, epoch); a worker whose commit failed has nothing.
    Map<WorkerId, Map<Long, CommittedPartitionP>> committed = new HashMap<>();
    commits.forEach((worker, f) -> {
      Map<Long, CommittedPartitionP> files = new HashMap<>();
      if (!f.isCompletedExceptionally()) {
        CommitFilesResponse response = f.join();
        response.getCommittedList().forEach(c -> files.put(key(c.getPartitionId(), c.getEpoch()), c));
        for (int i = 0; i < response.getFailedPartitionIdsCount(); i++) {
          int epoch = i < response.getFailedEpochsCount() ? response.getFailedEpochs(i) : -1;
          LOG.warn("Worker {} lost partition {} epoch {} of shuffle {} (its file failed)", worker,
              response.getFailedPartitionIds(i), epoch, s.id());
        }
      }
      committed.put(worker, files);
    });
    long bytes = 0;
    SortedSet<Integer> lost = new TreeSet<>();
    for (PartitionLocation location : locations) {
      boolean anyCopy = false;
      for (PartitionLocation copy : location.copies()) {
        // A location the worker does not report (it restarted, or expired the shuffle) held data
        // that is gone, like one on a worker that did not answer.
        CommittedPartitionP c = committed.getOrDefault(copy.worker(), Map.of())
            .get(key(copy.partition(), copy.epoch()));
        if (c == null) {
          continue;
        }
        anyCopy = true;
        if (c.getBytes() > 0) {
          b.addFiles(CommittedFileP.newBuilder().setLocation(IdMapper.toProto(copy))
              .setBytes(c.getBytes()).setChunks(c.getChunks()));
          bytes += copy.role() == Role.PRIMARY ? c.getBytes() : 0; // the shuffle's bytes, not its copies'
        }
      }
      if (!anyCopy) {
        lost.add(location.partition());
      }
    }
    b.addAllLostPartitionIds(lost);
    if (!lost.isEmpty()) {
      LOG.warn("Shuffle {} committed with {} partitions lost on every copy (for example {}): their reducers "
          + "fail and the map stage runs again", s.id(), lost.size(), lost.first());
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
    ShuffleLifecycle s = latestGeneration(r.getShuffleId());
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
    List<ShuffleLifecycle> list;
    synchronized (generations) {
      list = generations.remove(shuffleId);
    }
    if (list == null) {
      return;
    }
    for (ShuffleLifecycle s : list) {
      shuffles.remove(s.id().shuffle());
      unregister(s);
    }
  }

  private void unregister(ShuffleLifecycle s) {
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
    synchronized (generations) {
      generations.clear();
    }
  }
}
