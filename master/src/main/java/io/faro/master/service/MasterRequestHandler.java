package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.codahale.metrics.Counter;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.auth.ReplicaGrants;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.log.LogSafe;
import io.faro.common.network.Futures;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.master.mapping.ProtoMapper;
import io.faro.master.placement.DiskLoad;
import io.faro.master.placement.PlacementPolicy;
import io.faro.master.placement.PlacementRequest;
import io.faro.master.placement.WorkerReport;
import io.faro.master.placement.WorkerState;
import io.faro.master.raft.NotLeaderException;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.MasterStateView;
import io.faro.master.state.RegisteredApp;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.master.state.WorkerAdmission;
import io.faro.metrics.FaroMetrics;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.EmptyResponse;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.MessageType;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterAppResponse;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.TransferLeaderRequest;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Serves every master RPC. Runs on the RPC server's Netty event loops, so it never blocks: changes
 * are submitted to Raft and answered when the returned future completes (on a Ratis thread); reads
 * of the state take the state machine's read lock, held by the apply thread only for the time of
 * one command.
 *
 * <p>Heartbeats are not logged: they update the leader's {@link LoadView}. Only a change of
 * membership (register, lost, removed) becomes a Raft entry.
 *
 * <p>Slot requests are checked here and placed by the {@link PlacementPolicy}; the placement goes
 * to Raft as one AllocateSlots entry.
 *
 * <p>Over 400 lines, knowingly: one short method per request the master serves (workers, apps,
 * slots, status, admin), each validating before it reads the state or submits to Raft; which
 * workers get slots is decided in master.placement.
 */
public final class MasterRequestHandler implements RequestHandler {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(MasterRequestHandler.class);
  private static final EmptyResponse EMPTY = EmptyResponse.getDefaultInstance();

  /** How long a leader transfer may take: an election or two, plus catching up. */
  private static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(20);

  /** Most disks a worker may report: far more than any machine has. */
  static final int MAX_DISKS = 1024;

  /** Most workers a slot request may exclude or avoid: more than any cluster has. */
  static final int MAX_LISTED_WORKERS = 100_000;

  /**
   * Bounds on what one request may make this master hold or compute, checked before anything
   * proportional to the request is allocated.
   *
   * @param maxPartitionsPerShuffle faro.master.max.partitions.per.shuffle
   * @param maxApps faro.master.max.apps
   */
  public record Limits(
      int maxPartitionsPerShuffle, int maxApps, int maxAppsPerHost, int maxAppsPerUser) {
    public Limits {
      if (maxPartitionsPerShuffle <= 0 || maxApps <= 0) {
        throw new IllegalArgumentException(
            "limits must be positive: " + maxPartitionsPerShuffle + ", " + maxApps);
      }
    }
  }

  private final RaftNode raft;
  private final LoadView loads;
  private final PlacementPolicy placement;
  private final Clock clock;
  private final Limits limits;
  private final AuthOptions.Settings auth;
  private final Counter slotsPlaced;
  private final AdmissionService admission;

  /** The requests a master serves. */
  public static final List<MessageType> SERVED =
      List.of(
          MessageType.REGISTER_WORKER_REQUEST,
          MessageType.WORKER_HEARTBEAT_REQUEST,
          MessageType.REGISTER_APP_REQUEST,
          MessageType.APP_HEARTBEAT_REQUEST,
          MessageType.UNREGISTER_APP_REQUEST,
          MessageType.REQUEST_SLOTS_REQUEST,
          MessageType.UNREGISTER_SHUFFLE_REQUEST,
          MessageType.CLUSTER_STATUS_REQUEST,
          MessageType.MASTER_STATUS_REQUEST,
          MessageType.TRANSFER_LEADER_REQUEST,
          MessageType.SET_WORKER_ADMISSION_REQUEST,
          MessageType.SET_ADMISSION_RULES_REQUEST,
          MessageType.ADMISSION_RULES_REQUEST);

  /**
   * @param auth with authentication on, the cluster secret that app secrets are derived from
   */
  public MasterRequestHandler(
      RaftNode raft,
      LoadView loads,
      PlacementPolicy placement,
      Clock clock,
      Limits limits,
      AuthOptions.Settings auth,
      AdmissionService admission,
      FaroMetrics metrics) {
    this.admission = requireNonNull(admission, "admission is null");
    this.limits = requireNonNull(limits, "limits is null");
    this.auth = requireNonNull(auth, "auth is null");
    this.slotsPlaced =
        metrics.counter(
            "faro_master_slots_placed",
            "Partition locations placed (a replicated partition counts once).");
    this.raft = requireNonNull(raft, "raft is null");
    this.loads = requireNonNull(loads, "loads is null");
    this.placement = requireNonNull(placement, "placement is null");
    this.clock = requireNonNull(clock, "clock is null");
  }

  /**
   * A worker's registration and heartbeats need the cluster secret, an operator's state changes
   * (leader transfer, exclude, include, decommission) the admin secret, and what acts on an
   * application (slots, unregistering a shuffle, its heartbeat and unregistering) that app's
   * registration; registering an app and the status are open.
   */
  @Override
  public Optional<String> refusal(MessageType type, Message meta, Identity who) {
    return switch (type) {
      case REGISTER_WORKER_REQUEST, WORKER_HEARTBEAT_REQUEST ->
          Identity.require(Identity.CLUSTER, who, type);
      case TRANSFER_LEADER_REQUEST, SET_WORKER_ADMISSION_REQUEST, SET_ADMISSION_RULES_REQUEST ->
          Identity.require(Identity.ADMIN, who, type);
      case REQUEST_SLOTS_REQUEST ->
          appRefusal(((RequestSlotsRequest) meta).getShuffle().getAppId(), who, type);
      case UNREGISTER_SHUFFLE_REQUEST ->
          appRefusal(((UnregisterShuffleRequest) meta).getShuffle().getAppId(), who, type);
      case APP_HEARTBEAT_REQUEST -> appRefusal(((AppHeartbeatRequest) meta).getAppId(), who, type);
      case UNREGISTER_APP_REQUEST ->
          appRefusal(((UnregisterAppRequest) meta).getAppId(), who, type);
      default -> Optional.empty();
    };
  }

  /**
   * What anyone may ask: an application's registration (it has no identity before it), and the
   * status and rules that operators' tools and benchmarks read.
   */
  @Override
  public java.util.Set<MessageType> openToAnyone() {
    return OPEN;
  }

  private static final java.util.Set<MessageType> OPEN =
      java.util.EnumSet.of(
          MessageType.REGISTER_APP_REQUEST,
          MessageType.CLUSTER_STATUS_REQUEST,
          MessageType.MASTER_STATUS_REQUEST,
          MessageType.ADMISSION_RULES_REQUEST);

  /** Refused unless {@code who} is the registration of {@code appId} that this master holds. */
  private Optional<String> appRefusal(String appId, Identity who, MessageType type) {
    String nonce;
    try {
      AppId app = new AppId(appId);
      nonce =
          raft.read(
              state -> {
                RegisteredApp registered = state.apps().get(app);
                return registered == null ? "" : registered.nonce();
              });
    } catch (IllegalArgumentException e) {
      return Optional.of(type + " names no valid app: " + e.getMessage());
    }
    return Identity.requireApp(appId, nonce, who, type);
  }

  @Override
  public void handle(Request request, Responder responder) {
    CompletableFuture<? extends Message> answer;
    try {
      answer =
          switch (request.type()) {
            case REGISTER_WORKER_REQUEST ->
                registerWorker(request.meta(RegisterWorkerRequest.class));
            case WORKER_HEARTBEAT_REQUEST ->
                workerHeartbeat(request.meta(WorkerHeartbeatRequest.class));
            case REGISTER_APP_REQUEST ->
                registerApp(request.meta(RegisterAppRequest.class), sourceHost(request));
            case APP_HEARTBEAT_REQUEST ->
                appHeartbeat(
                    request.meta(AppHeartbeatRequest.class),
                    Identity.of(request.channel()),
                    sourceHost(request));
            case UNREGISTER_APP_REQUEST -> unregisterApp(request.meta(UnregisterAppRequest.class));
            case REQUEST_SLOTS_REQUEST -> requestSlots(request.meta(RequestSlotsRequest.class));
            case UNREGISTER_SHUFFLE_REQUEST ->
                unregisterShuffle(request.meta(UnregisterShuffleRequest.class));
            case CLUSTER_STATUS_REQUEST ->
                clusterStatus(
                    request.meta(ClusterStatusRequest.class), Identity.of(request.channel()));
            case MASTER_STATUS_REQUEST ->
                CompletableFuture.<Message>completedFuture(masterStatus());
            case TRANSFER_LEADER_REQUEST ->
                transferLeader(request.meta(TransferLeaderRequest.class));
            case SET_WORKER_ADMISSION_REQUEST ->
                setWorkerAdmission(request.meta(SetWorkerAdmissionRequest.class));
            case SET_ADMISSION_RULES_REQUEST ->
                admission.set(request.meta(io.faro.proto.SetAdmissionRulesRequest.class));
            case ADMISSION_RULES_REQUEST ->
                CompletableFuture.<Message>completedFuture(admission.rules());
            default ->
                CompletableFuture.failedFuture(
                    new FaroException(
                        ErrorCode.UNSUPPORTED_MESSAGE,
                        "master " + raft.masterId() + " does not serve " + request.type()));
          };
    } catch (RuntimeException e) {
      fail(responder, e);
      return;
    }
    answer.whenComplete(
        (response, error) -> {
          if (error != null) {
            fail(responder, error);
          } else {
            responder.respond(response);
          }
        });
  }

  private static void fail(Responder responder, Throwable error) {
    Throwable cause = Futures.unwrap(error);
    if (cause instanceof NotLeaderException notLeader) {
      responder.fail(
          ErrorResponse.newBuilder()
              .setCode(ErrorCode.NOT_LEADER.toProto())
              .setMessage(notLeader.getMessage())
              .setRetryable(true)
              .setLeaderHint(notLeader.leaderHint())
              .build());
    } else {
      responder.fail(cause);
    }
  }

  // ------------------------------------------------------------------ workers

  private CompletableFuture<Message> registerWorker(RegisterWorkerRequest request) {
    WorkerId worker = ProtoMapper.workerId(request.getWorkerId());
    if (request.getDisksCount() > MAX_DISKS) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "worker "
              + worker
              + " registers "
              + request.getDisksCount()
              + " disks; at most "
              + MAX_DISKS);
    }
    StateCommand command =
        parse(
            () ->
                new StateCommand.RegisterWorker(
                    worker,
                    IdMapper.endpoint(request.getEndpoint()),
                    ProtoMapper.disks(request.getDisksList())));
    return submit(command)
        .thenApply(
            applied -> {
              loads.workerRegistered(worker, clock.millis());
              return RegisterWorkerResponse.getDefaultInstance();
            });
  }

  private CompletableFuture<Message> workerHeartbeat(WorkerHeartbeatRequest request) {
    WorkerId worker = ProtoMapper.workerId(request.getWorkerId());
    if (request.getDisksCount() > MAX_DISKS) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "heartbeat of worker "
              + worker
              + " reports "
              + request.getDisksCount()
              + " disks; at most "
              + MAX_DISKS);
    }
    List<ShuffleId> reported = request.getShufflesList().stream().map(IdMapper::shuffleId).toList();
    List<DiskLoad> disks = request.getDisksList().stream().map(ProtoMapper::diskLoad).toList();
    WorkerReport report =
        new WorkerReport(
            ProtoMapper.workerState(request.getState()),
            Math.max(0, request.getStartedAtMs()),
            request.getRecentCommittedFiles(),
            request.getRecentCommittedBytes());
    record Check(Optional<RegisteredWorker> registered, int knownWorkers, List<ShuffleId> expired) {
      boolean alive() {
        return registered.map(RegisteredWorker::alive).orElse(false);
      }
    }
    Check check =
        raft.read(
            state ->
                new Check(
                    state.worker(worker),
                    state.workers().size(),
                    reported.stream().filter(shuffle -> !state.hasShuffle(shuffle)).toList()));
    // Every master keeps the loads it hears of the workers it knows; of others (a follower may
    // lag behind a fresh registration) only the time, and a bounded number of them.
    if (check.registered().isPresent()) {
      loads.workerHeartbeat(worker, clock.millis(), disks, report);
      loads.workerHolds(worker, bytesByApp(reported, request.getShuffleBytesList()));
    } else {
      loads.unknownWorkerHeartbeat(worker, clock.millis(), check.knownWorkers());
    }
    if (!raft.isLeaderReady()) {
      return CompletableFuture.completedFuture(
          WorkerHeartbeatResponse.newBuilder().setLeader(false).build());
    }
    boolean decommission =
        check.registered().map(w -> w.admission() == WorkerAdmission.DECOMMISSIONING).orElse(false);
    if (decommission && report.state() == WorkerState.DRAINED) {
      return recordDrained(worker);
    }
    if (check.expired().isEmpty()) {
      return CompletableFuture.completedFuture(
          WorkerHeartbeatResponse.newBuilder()
              .setLeader(true)
              .setRegisterAgain(!check.alive())
              .setDecommission(decommission)
              .build());
    }
    // Telling a worker to delete files is the one answer a deposed leader that does not know it
    // yet must never give: confirm leadership and the state with a linearizable read first.
    return raft.readBarrier()
        .thenApply(
            applied ->
                raft.read(
                    fresh -> {
                      List<ShuffleId> expired =
                          reported.stream().filter(s -> !fresh.hasShuffle(s)).toList();
                      boolean alive =
                          fresh.worker(worker).map(RegisteredWorker::alive).orElse(false);
                      return WorkerHeartbeatResponse.newBuilder()
                          .setLeader(true)
                          .setRegisterAgain(!alive)
                          .setDecommission(decommission)
                          .addAllExpiredShuffles(expired.stream().map(IdMapper::toProto).toList())
                          .build();
                    }));
  }

  /**
   * A decommissioning worker reports it drained, and exits once it hears back that it is
   * decommissioned: the leader records that first, unless an include-worker was applied meanwhile
   * (then the worker hears it is not decommissioning, and serves again). A record that fails
   * otherwise (no longer leader, Raft timed out) fails the heartbeat: the worker reports again.
   */
  private CompletableFuture<Message> recordDrained(WorkerId worker) {
    return submit(
            new StateCommand.SetWorkerAdmission(
                worker,
                WorkerAdmission.DECOMMISSIONED,
                "drained: every shuffle it held was gone, or faro.worker.decommission.timeout"
                    + " passed",
                true))
        .handle(
            (applied, error) -> {
              Throwable cause = error == null ? null : Futures.unwrap(error);
              boolean includedMeanwhile =
                  cause instanceof FaroException fe && fe.code() == ErrorCode.INVALID_REQUEST;
              if (cause != null && !includedMeanwhile) {
                throw new java.util.concurrent.CompletionException(cause);
              }
              if (includedMeanwhile) {
                LOG.info(
                    "Worker {} drained, but is not decommissioned: {}", worker, cause.getMessage());
              } else {
                LOG.info("Worker {} drained and is decommissioned", worker);
              }
              return WorkerHeartbeatResponse.newBuilder()
                  .setLeader(true)
                  .setDecommission(!includedMeanwhile)
                  .build();
            });
  }

  // ------------------------------------------------------------------ apps

  /**
   * Registers an app. With authentication on, the registration's nonce is made from the driver's
   * token and the answer carries the app's secret; an app id registered with another token is
   * refused (another driver holds it).
   */
  private CompletableFuture<Message> registerApp(RegisterAppRequest request, String host) {
    AppId app = ProtoMapper.appId(request.getAppId());
    io.faro.common.admission.AppProfile profile =
        ProtoMapper.profile(request.getProfile()).withHost(host);
    if (!auth.enabled()) {
      return registerApp(app, "", profile, true);
    }
    byte[] token = request.getRegistrationToken().toByteArray();
    if (token.length != AppSecrets.TOKEN_BYTES) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "this cluster authenticates applications (faro.auth.enabled) and app "
              + app
              + " sent no registration token: its Faro client is older than the cluster's");
    }
    String nonce = AppSecrets.nonce(token);
    Secret cluster = auth.cluster().orElseThrow();
    return registerApp(app, nonce, profile, true)
        .thenApply(
            registered ->
                RegisterAppResponse.newBuilder()
                    .setAppNonce(nonce)
                    .setAppSecret(
                        ByteString.copyFrom(AppSecrets.derive(cluster, app, nonce).toBytes()))
                    .build());
  }

  /**
   * The registration of {@code app} with {@code nonce} ("" without authentication), if the
   * admission rules admit a new app of {@code profile} (when {@code admit}: not for an app that
   * registered before and heartbeats after the masters removed it).
   */
  private CompletableFuture<Message> registerApp(
      AppId app, String nonce, io.faro.common.admission.AppProfile profile, boolean admit) {
    String held = raft.read(state -> heldNonce(state.apps().get(app)));
    if (held != null && !held.equals(nonce)) {
      throw anotherRegistration(app, held);
    }
    // On the leader, as the limit below: a refused app is never logged.
    if (admit) {
      admission.checkAdmitted(app, profile);
    }
    // Checked on the leader, not in the replicated apply: masters may be configured differently
    // during a rolling change, and the state must not diverge. Racing registrations may overshoot
    // the limit by the few in flight.
    String refusal = raft.read(state -> state.hasApp(app) ? null : overLimit(state, app, profile));
    if (refusal != null) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED, "cannot register app " + app + ": " + refusal);
    }
    return submit(new StateCommand.RegisterApp(app, nonce, profile))
        .thenApply(
            applied -> {
              // Two drivers racing: the first registration's nonce stays.
              String kept = raft.read(state -> heldNonce(state.apps().get(app)));
              if (kept != null && !kept.equals(nonce)) {
                throw anotherRegistration(app, kept);
              }
              loads.appHeartbeat(app, clock.millis());
              return EMPTY;
            });
  }

  /**
   * Why a new registration of {@code profile} would take the cluster, its host or its user over
   * their limits, or null.
   */
  private String overLimit(
      io.faro.master.state.StateReader state,
      AppId app,
      io.faro.common.admission.AppProfile profile) {
    if (state.apps().size() >= limits.maxApps()) {
      return limits.maxApps()
          + " apps are registered, the most this cluster takes (faro.master.max.apps)";
    }
    int fromHost = 0;
    int ofUser = 0;
    for (RegisteredApp a : state.apps().values()) {
      if (!profile.host().isEmpty() && a.profile().host().equals(profile.host())) {
        fromHost++;
      }
      if (!profile.user().isEmpty() && a.profile().user().equals(profile.user())) {
        ofUser++;
      }
    }
    if (fromHost >= limits.maxAppsPerHost()) {
      return "host "
          + io.faro.common.log.LogSafe.text(profile.host())
          + " has registered "
          + fromHost
          + " apps that run, the most one host may (faro.master.max.apps.per.host)";
    }
    if (ofUser >= limits.maxAppsPerUser()) {
      return "user "
          + io.faro.common.log.LogSafe.text(profile.user())
          + " runs "
          + ofUser
          + " registered apps, the most one user may (faro.master.max.apps.per.user)";
    }
    return null;
  }

  /** The address a request came from, as this master's connection sees it. */
  private static String sourceHost(Request request) {
    return request.channel().remoteAddress() instanceof java.net.InetSocketAddress a
        ? a.getAddress().getHostAddress()
        : "";
  }

  private static String heldNonce(RegisteredApp registered) {
    return registered == null ? null : registered.nonce();
  }

  private static FaroException anotherRegistration(AppId app, String held) {
    return new FaroException(
        ErrorCode.UNAUTHENTICATED,
        held.isEmpty()
            ? "app "
                + app
                + " is registered already, from before faro.auth.enabled was turned on or off:"
                + " change that setting only while no application runs"
            : "app "
                + app
                + " is registered already by another driver (another registration token)");
  }

  private CompletableFuture<Message> appHeartbeat(
      AppHeartbeatRequest request, Identity who, String host) {
    AppId app = ProtoMapper.appId(request.getAppId());
    if (!raft.isLeaderReady()) {
      // Apps heartbeat every master; a follower keeps the time for when it leads (of apps it does
      // not hold yet, a bounded number).
      record Known(boolean known, int apps) {}
      Known known = raft.read(state -> new Known(state.hasApp(app), state.apps().size()));
      if (known.known()) {
        loads.appHeartbeat(app, clock.millis());
      } else {
        loads.unknownAppHeartbeat(app, clock.millis(), known.apps());
      }
      return CompletableFuture.completedFuture(EMPTY);
    }
    if (!raft.read(state -> state.hasApp(app))) {
      // The app was removed (e.g. timed out during a long pause) or the master never saw it: with
      // authentication on, the heartbeat came from its registration (see refusal), whose nonce
      // it keeps.
      // Admitted when it first registered: the rules are not asked again (a running app is never
      // cut off); its heartbeat says who runs it (an older client's says nothing).
      return registerApp(
          app,
          who.kind() == Identity.Kind.APP ? who.nonce() : "",
          ProtoMapper.profile(request.getProfile()).withHost(host),
          false);
    }
    loads.appHeartbeat(app, clock.millis());
    return CompletableFuture.completedFuture(EMPTY);
  }

  /**
   * A heartbeat's bytes per shuffle summed per app; nothing when the two lists do not pair up (an
   * older worker sends no bytes), and a negative count is none.
   */
  private static java.util.Map<AppId, Long> bytesByApp(List<ShuffleId> shuffles, List<Long> bytes) {
    java.util.Map<AppId, Long> byApp = new java.util.HashMap<>();
    if (shuffles.size() == bytes.size()) {
      for (int i = 0; i < shuffles.size(); i++) {
        byApp.merge(shuffles.get(i).app(), Math.max(0L, bytes.get(i)), Long::sum);
      }
    }
    return byApp;
  }

  private CompletableFuture<Message> unregisterApp(UnregisterAppRequest request) {
    AppId app = ProtoMapper.appId(request.getAppId());
    return submit(new StateCommand.RemoveApp(app, "unregistered by the application"))
        .thenApply(
            applied -> {
              loads.forgetApp(app);
              return EMPTY;
            });
  }

  // ------------------------------------------------------------------ shuffles

  private static final int MAX_REQUEST_ID = 128;

  private CompletableFuture<Message> requestSlots(RequestSlotsRequest request) {
    ShuffleId shuffle = IdMapper.shuffleId(request.getShuffle());
    int numPartitions = request.getNumPartitions();
    // Before anything proportional to the request is built: a 50-byte request may ask for 2^31.
    if (numPartitions > limits.maxPartitionsPerShuffle()) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "shuffle "
              + shuffle
              + " has "
              + numPartitions
              + " partitions; this cluster places at most "
              + limits.maxPartitionsPerShuffle()
              + " per shuffle (faro.master.max.partitions.per.shuffle)");
    }
    if (request.getExcludedWorkersCount() + request.getAvoidedWorkersCount() > MAX_LISTED_WORKERS) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "slot request for shuffle "
              + shuffle
              + " lists "
              + (request.getExcludedWorkersCount() + request.getAvoidedWorkersCount())
              + " excluded and avoided workers; at most "
              + MAX_LISTED_WORKERS);
    }
    List<Integer> partitions =
        PlacementRequest.partitionsToPlace(shuffle, numPartitions, request.getPartitionIdsList());
    // Kept in the replicated state, 32 per shuffle: a UUID fits, an essay does not.
    if (request.getRequestId().length() > MAX_REQUEST_ID) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "request_id of a slot request for shuffle "
              + shuffle
              + " has "
              + request.getRequestId().length()
              + " characters; at most "
              + MAX_REQUEST_ID);
    }
    PlacementRequest placementRequest =
        parse(
            () ->
                new PlacementRequest(
                    shuffle, partitions, request.getEpoch(), request.getReplicate()));
    requireLeader("slots for shuffle " + shuffle);

    Optional<List<RegisteredWorker>> alive =
        raft.read(
            state ->
                state.hasApp(shuffle.app()) ? Optional.of(state.aliveWorkers()) : Optional.empty());
    if (alive.isEmpty()) {
      throw new FaroException(
          ErrorCode.UNKNOWN_APP,
          "cannot place shuffle "
              + shuffle
              + ": app "
              + shuffle.app()
              + " is not registered (never registered, unregistered, or removed after "
              + "no heartbeat for faro.master.app.timeout)");
    }
    // A new shuffle over its user's or queue's quota is refused; one already placed never is, nor
    // a later generation of one (a stage re-run).
    if (!request.getContinuesShuffle()) {
      admission.checkQuota(shuffle, numPartitions);
    }
    loads.appHeartbeat(shuffle.app(), clock.millis());
    List<PartitionLocation> placed =
        placement.place(
            placementRequest,
            alive.get(),
            request.getExcludedWorkersList(),
            request.getAvoidedWorkersList());
    // The log entry holds slot counts per worker, not the locations: its size grows with the
    // workers used, so a million partitions fit Ratis's entry limit. The locations go to the
    // requester.
    return submit(
            new StateCommand.AllocateSlots(shuffle, numPartitions, placed, request.getRequestId()))
        .thenApply(
            applied -> {
              RequestSlotsResponse.Builder b = RequestSlotsResponse.newBuilder();
              placed.forEach(l -> b.addLocations(IdMapper.toProto(l)));
              if (auth.enabled()) {
                Secret cluster = auth.cluster().orElseThrow();
                for (PartitionLocation l : placed) {
                  for (PartitionLocation copy : l.copies()) {
                    String worker = copy.worker().value();
                    if (!b.containsPlacementGrants(worker)) {
                      b.putPlacementGrants(
                          worker,
                          ByteString.copyFrom(
                              io.faro.common.auth.PlacementGrants.grant(
                                  cluster, shuffle, numPartitions, worker)));
                    }
                  }
                  l.replica()
                      .filter(r -> !b.containsReplicaGrants(r.worker().value()))
                      .ifPresent(
                          r ->
                              b.putReplicaGrants(
                                  r.worker().value(),
                                  ByteString.copyFrom(
                                      ReplicaGrants.grant(
                                          cluster,
                                          shuffle,
                                          r.worker().value(),
                                          r.endpoint().host(),
                                          r.endpoint().pushPort()))));
                }
              }
              slotsPlaced.inc(placed.size());
              return b.build();
            });
  }

  private CompletableFuture<Message> unregisterShuffle(UnregisterShuffleRequest request) {
    ShuffleId shuffle = IdMapper.shuffleId(request.getShuffle());
    return submit(new StateCommand.UnregisterShuffle(shuffle)).thenApply(applied -> EMPTY);
  }

  /**
   * The cluster's status. With authentication on, only members and operators see which apps and
   * shuffles it holds (ids name applications); anyone else, as an anonymous status tool, gets the
   * workers and the totals.
   */
  private CompletableFuture<Message> clusterStatus(ClusterStatusRequest request, Identity who) {
    if (!request.getAppsAfter().isEmpty()) {
      ProtoMapper.appId(request.getAppsAfter()); // a cursor is an id, bounded like one
    }
    if (request.hasShufflesAfter()) {
      IdMapper.shuffleId(request.getShufflesAfter());
    }
    boolean listsApps =
        !auth.enabled() || who.equals(Identity.ADMIN) || who.equals(Identity.CLUSTER);
    return raft.readBarrier()
        .thenApply(
            applied -> {
              ClusterStatusResponse status = clusterStatusHere(request, applied);
              return listsApps
                  ? status
                  : status.toBuilder()
                      .clearApps()
                      .clearShuffles()
                      .clearNextAppsAfter()
                      .clearNextShufflesAfter()
                      .build();
            });
  }

  /**
   * The cluster's status from this master's own copy of the state, as applied up to {@code
   * applied}, without a read barrier (a follower's may lag): for the RPC once the barrier passed,
   * and for the HTTP API.
   */
  public ClusterStatusResponse clusterStatusHere(ClusterStatusRequest request, long applied) {
    return raft.read(
        state ->
            ProtoMapper.clusterStatus(
                state,
                loads.workerHeartbeats(),
                loads::reported,
                raft.leaderId(),
                applied,
                request));
  }

  // ------------------------------------------------------------------ admin

  /**
   * This master's own view: served by every master, from local state only (also for its HTTP page).
   */
  public MasterStatusResponse masterStatus() {
    RaftNode.NodeStatus node = raft.status();
    MasterStatusResponse.Builder b =
        MasterStatusResponse.newBuilder()
            .setMasterId(raft.masterId())
            .setRole(node.role())
            .setTerm(node.term())
            .setAppliedIndex(node.appliedIndex())
            .setCommitIndex(node.commitIndex())
            .setLeaderId(node.leaderId())
            .setLeaderReady(node.leaderReady())
            .setPid(ProcessHandle.current().pid())
            .setSnapshotIndex(node.snapshotIndex())
            .setLogStartIndex(node.logStartIndex())
            .addAllPeers(raft.peers())
            .setRpcEndpoint(raft.rpcEndpoint());
    raft.read(
        state -> {
          MasterStateView view = state.view();
          b.setWorkers(view.workers().size())
              .setAliveWorkers(state.aliveWorkers().size())
              .setApps(view.apps().size())
              .setShuffles(view.shuffles().size());
          return null;
        });
    return b.build();
  }

  private CompletableFuture<Message> setWorkerAdmission(SetWorkerAdmissionRequest request) {
    WorkerId worker = ProtoMapper.workerId(request.getWorkerId());
    WorkerAdmission admission = ProtoMapper.admission(request.getAdmission());
    if (admission == WorkerAdmission.DECOMMISSIONED) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "a worker is decommissioned by the masters once it drained; decommission worker "
              + worker
              + " instead (bin/faro admin decommission-worker)");
    }
    return submit(new StateCommand.SetWorkerAdmission(worker, admission, request.getReason()))
        .thenApply(
            applied -> {
              LOG.info(
                  "Worker {} is now {}{}",
                  worker,
                  admission.name().toLowerCase(java.util.Locale.ROOT),
                  request.getReason().isEmpty() ? "" : ": " + LogSafe.text(request.getReason()));
              return EMPTY;
            });
  }

  private CompletableFuture<Message> transferLeader(TransferLeaderRequest request) {
    String to = request.getTo().trim();
    if (to.isEmpty()) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST, "a leader transfer needs the id of the new leader");
    }
    return raft.transferLeadership(to, TRANSFER_TIMEOUT).thenApply(done -> EMPTY);
  }

  // ------------------------------------------------------------------ helpers

  private void requireLeader(String what) {
    if (!raft.isLeaderReady()) {
      throw raft.notLeader(what);
    }
  }

  /** The admission rules and quotas this master applies. */
  AdmissionService admission() {
    return admission;
  }

  /** Stamps the leader's time, logs the command, and fails the future when it was refused. */
  private CompletableFuture<ApplyResult.Applied> submit(StateCommand command) {
    return raft.submit(new StampedCommand(clock.millis(), command))
        .thenApply(
            result -> {
              if (result instanceof ApplyResult.Rejected rejected) {
                throw new FaroException(rejected.code(), rejected.message());
              }
              return (ApplyResult.Applied) result;
            });
  }

  private static <T> T parse(Supplier<T> constructor) {
    try {
      return constructor.get();
    } catch (IllegalArgumentException e) {
      throw new FaroException(ErrorCode.INVALID_REQUEST, e.getMessage());
    }
  }
}
