package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.Futures;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.common.version.FeatureLevel;
import io.faro.master.placement.PlacementPolicy;
import io.faro.master.raft.NotLeaderException;
import io.faro.master.raft.RaftNode;
import io.faro.metrics.FaroMetrics;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.MessageType;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.SetAdmissionRulesRequest;
import io.faro.proto.SetFeatureLevelRequest;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.TransferLeaderRequest;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerHeartbeatRequest;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The master's RPC edge: who may send each request ({@link #refusal}), and a dispatch table from
 * request type to the group that serves it: {@link WorkerRpcs} (registration, heartbeats), {@link
 * AppRpcs} (registration, heartbeats, unregistering), {@link SlotRpcs} (placing and unregistering
 * shuffles), {@link AdminRpcs} (status, worker admission, leader transfer) and the {@link
 * AdmissionService} (rules and quotas).
 *
 * <p>Runs on the RPC server's Netty event loops, so it never blocks: changes are submitted to Raft
 * and answered when the returned future completes (on a Ratis thread); reads of the state take the
 * state machine's read lock, held by the apply thread only for the time of one command. A master
 * that does not lead answers what needs the leader with NOT_LEADER and a hint.
 */
public final class MasterRequestHandler implements RequestHandler {
  /**
   * Bounds on what one request may make this master hold or compute, checked before anything
   * proportional to the request is allocated.
   *
   * @param maxPartitionsPerShuffle faro.master.max.partitions.per.shuffle
   * @param maxApps faro.master.max.apps
   * @param maxAppsPerHost faro.master.max.apps.per.host
   * @param maxAppsPerUser faro.master.max.apps.per.user
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
          MessageType.ADMISSION_RULES_REQUEST,
          MessageType.SET_FEATURE_LEVEL_REQUEST);

  /**
   * What anyone may ask: an application's registration (it has no identity before it), and the
   * status and rules that operators' tools and benchmarks read.
   */
  private static final Set<MessageType> OPEN =
      EnumSet.of(
          MessageType.REGISTER_APP_REQUEST,
          MessageType.CLUSTER_STATUS_REQUEST,
          MessageType.MASTER_STATUS_REQUEST,
          MessageType.ADMISSION_RULES_REQUEST);

  /** How one request type is answered. */
  @FunctionalInterface
  private interface Rpc {
    CompletableFuture<? extends Message> answer(Request request);
  }

  private final RaftNode raft;
  private final AppRpcs apps;
  private final AdminRpcs admin;
  private final AdmissionService admission;
  private final FeatureLevels levels;
  private final Map<MessageType, Rpc> rpcs = new EnumMap<>(MessageType.class);

  /**
   * @param auth with authentication on, the cluster secret that app secrets are derived from
   */
  public MasterRequestHandler(
      RaftNode raft,
      LoadView loads,
      PlacementPolicy placement,
      Clock clock,
      Limits limits,
      AuthSettings auth,
      AdmissionService admission,
      FeatureLevels levels,
      FaroMetrics metrics) {
    this.raft = requireNonNull(raft, "raft is null");
    this.admission = requireNonNull(admission, "admission is null");
    RaftCalls calls = new RaftCalls(raft, clock);
    WorkerRpcs workers = new WorkerRpcs(calls, loads);
    this.apps = new AppRpcs(calls, loads, limits, auth, admission);
    SlotRpcs slots =
        new SlotRpcs(
            calls,
            loads,
            placement,
            limits,
            auth,
            admission,
            metrics.counter(
                "faro_master_slots_placed",
                "Partition locations placed (a replicated partition counts once)."));
    this.levels = requireNonNull(levels, "levels is null");
    this.admin = new AdminRpcs(calls, loads, auth);

    serve(
        MessageType.REGISTER_WORKER_REQUEST,
        r -> workers.register(r.meta(RegisterWorkerRequest.class)));
    serve(
        MessageType.WORKER_HEARTBEAT_REQUEST,
        r -> workers.heartbeat(r.meta(WorkerHeartbeatRequest.class)));
    serve(
        MessageType.REGISTER_APP_REQUEST,
        r -> apps.register(r.meta(RegisterAppRequest.class), sourceHost(r)));
    serve(
        MessageType.APP_HEARTBEAT_REQUEST,
        r ->
            apps.heartbeat(
                r.meta(AppHeartbeatRequest.class), Identity.of(r.channel()), sourceHost(r)));
    serve(
        MessageType.UNREGISTER_APP_REQUEST,
        r -> apps.unregister(r.meta(UnregisterAppRequest.class)));
    serve(
        MessageType.REQUEST_SLOTS_REQUEST,
        r -> slots.requestSlots(r.meta(RequestSlotsRequest.class)));
    serve(
        MessageType.UNREGISTER_SHUFFLE_REQUEST,
        r -> slots.unregisterShuffle(r.meta(UnregisterShuffleRequest.class)));
    serve(
        MessageType.CLUSTER_STATUS_REQUEST,
        r -> admin.clusterStatus(r.meta(ClusterStatusRequest.class), Identity.of(r.channel())));
    serve(
        MessageType.MASTER_STATUS_REQUEST,
        r -> CompletableFuture.completedFuture(admin.masterStatus()));
    serve(
        MessageType.TRANSFER_LEADER_REQUEST,
        r -> admin.transferLeader(r.meta(TransferLeaderRequest.class)));
    serve(
        MessageType.SET_WORKER_ADMISSION_REQUEST,
        r -> admin.setWorkerAdmission(r.meta(SetWorkerAdmissionRequest.class)));
    serve(
        MessageType.SET_ADMISSION_RULES_REQUEST,
        r -> admission.set(r.meta(SetAdmissionRulesRequest.class)));
    serve(
        MessageType.ADMISSION_RULES_REQUEST,
        r -> CompletableFuture.completedFuture(admission.rules()));
    serve(
        MessageType.SET_FEATURE_LEVEL_REQUEST,
        r -> levels.set(r.meta(SetFeatureLevelRequest.class), admin::masterStatus));
    if (!rpcs.keySet().equals(EnumSet.copyOf(SERVED))) {
      throw new IllegalStateException("served " + rpcs.keySet() + ", declared " + SERVED);
    }
  }

  private void serve(MessageType type, Rpc rpc) {
    if (rpcs.put(type, rpc) != null) {
      throw new IllegalStateException(type + " is served twice");
    }
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
      case TRANSFER_LEADER_REQUEST,
          SET_WORKER_ADMISSION_REQUEST,
          SET_ADMISSION_RULES_REQUEST,
          SET_FEATURE_LEVEL_REQUEST ->
          Identity.require(Identity.ADMIN, who, type);
      case REQUEST_SLOTS_REQUEST ->
          apps.refusal(((RequestSlotsRequest) meta).getShuffle().getAppId(), who, type);
      case UNREGISTER_SHUFFLE_REQUEST ->
          apps.refusal(((UnregisterShuffleRequest) meta).getShuffle().getAppId(), who, type);
      case APP_HEARTBEAT_REQUEST ->
          apps.refusal(((AppHeartbeatRequest) meta).getAppId(), who, type);
      case UNREGISTER_APP_REQUEST ->
          apps.refusal(((UnregisterAppRequest) meta).getAppId(), who, type);
      default -> Optional.empty();
    };
  }

  @Override
  public Set<MessageType> openToAnyone() {
    return OPEN;
  }

  /** At feature level 2 and above, clients of protocol 1 are refused in their handshake. */
  @Override
  public int oldestProtocol() {
    return FeatureLevel.oldestProtocol(levels.level());
  }

  @Override
  public void handle(Request request, Responder responder) {
    Rpc rpc = rpcs.get(request.type());
    CompletableFuture<? extends Message> answer;
    try {
      answer =
          rpc != null
              ? rpc.answer(request)
              : CompletableFuture.failedFuture(
                  new FaroException(
                      ErrorCode.UNSUPPORTED_MESSAGE,
                      "master " + raft.masterId() + " does not serve " + request.type()));
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

  /** The address a request came from, as this master's connection sees it. */
  private static String sourceHost(Request request) {
    return request.channel().remoteAddress() instanceof InetSocketAddress a
        ? a.getAddress().getHostAddress()
        : "";
  }

  /**
   * The cluster's status from this master's own copy of the state, as applied up to {@code
   * applied}, without a read barrier (a follower's may lag): for the RPC once the barrier passed,
   * and for the HTTP API.
   */
  public ClusterStatusResponse clusterStatusHere(ClusterStatusRequest request, long applied) {
    return admin.clusterStatusHere(request, applied);
  }

  /**
   * This master's own view: served by every master, from local state only (also for its HTTP page).
   */
  public MasterStatusResponse masterStatus() {
    return admin.masterStatus();
  }

  /** The admission rules and quotas this master applies. */
  AdmissionService admission() {
    return admission;
  }
}
