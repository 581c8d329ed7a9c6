package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.codahale.metrics.Counter;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.PlacementGrants;
import io.faro.common.auth.ReplicaGrants;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.master.placement.PlacementPolicy;
import io.faro.master.placement.PlacementRequest;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.StateCommand;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.UnregisterShuffleRequest;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The shuffles' RPCs: a slot request is bounded and checked here (partitions, listed workers, the
 * app's registration, its quota), placed by the {@link PlacementPolicy}, and logged as one
 * AllocateSlots entry; with authentication on, the answer carries the placement and replica grants
 * that workers check. And unregistering a shuffle.
 */
final class SlotRpcs {
  /** Most workers a slot request may exclude or avoid: more than any cluster has. */
  static final int MAX_LISTED_WORKERS = 100_000;

  /** Longest request id: kept in the replicated state, 32 per shuffle (a UUID fits). */
  private static final int MAX_REQUEST_ID = 128;

  private final RaftCalls calls;
  private final RaftNode raft;
  private final LoadView loads;
  private final PlacementPolicy placement;
  private final MasterRequestHandler.Limits limits;
  private final AuthSettings auth;
  private final AdmissionService admission;
  private final Counter slotsPlaced;

  SlotRpcs(
      RaftCalls calls,
      LoadView loads,
      PlacementPolicy placement,
      MasterRequestHandler.Limits limits,
      AuthSettings auth,
      AdmissionService admission,
      Counter slotsPlaced) {
    this.calls = requireNonNull(calls, "calls is null");
    this.raft = calls.raft();
    this.loads = requireNonNull(loads, "loads is null");
    this.placement = requireNonNull(placement, "placement is null");
    this.limits = requireNonNull(limits, "limits is null");
    this.auth = requireNonNull(auth, "auth is null");
    this.admission = requireNonNull(admission, "admission is null");
    this.slotsPlaced = requireNonNull(slotsPlaced, "slotsPlaced is null");
  }

  CompletableFuture<Message> requestSlots(RequestSlotsRequest request) {
    ShuffleId shuffle = IdMapper.shuffleId(request.getShuffle());
    int numPartitions = request.getNumPartitions();
    PlacementRequest placementRequest = checked(request, shuffle);
    calls.requireLeader("slots for shuffle " + shuffle);

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
    loads.appHeartbeat(shuffle.app(), calls.now());
    List<PartitionLocation> placed =
        placement.place(
            placementRequest,
            alive.get(),
            request.getExcludedWorkersList(),
            request.getAvoidedWorkersList());
    // The log entry holds slot counts per worker, not the locations: its size grows with the
    // workers used, so a million partitions fit Ratis's entry limit. The locations go to the
    // requester.
    return calls
        .submit(
            new StateCommand.AllocateSlots(shuffle, numPartitions, placed, request.getRequestId()))
        .thenApply(
            applied -> {
              RequestSlotsResponse.Builder b = RequestSlotsResponse.newBuilder();
              placed.forEach(l -> b.addLocations(IdMapper.toProto(l)));
              if (auth.enabled()) {
                addGrants(b, shuffle, numPartitions, placed, auth.cluster().orElseThrow());
              }
              slotsPlaced.inc(placed.size());
              return b.build();
            });
  }

  /**
   * The placement {@code request} asks for, once every bound was checked: before anything
   * proportional to the request is built (a 50-byte request may ask for 2^31 partitions).
   */
  private PlacementRequest checked(RequestSlotsRequest request, ShuffleId shuffle) {
    int numPartitions = request.getNumPartitions();
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
    int listed = request.getExcludedWorkersCount() + request.getAvoidedWorkersCount();
    if (listed > MAX_LISTED_WORKERS) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "slot request for shuffle "
              + shuffle
              + " lists "
              + listed
              + " excluded and avoided workers; at most "
              + MAX_LISTED_WORKERS);
    }
    List<Integer> partitions =
        PlacementRequest.partitionsToPlace(shuffle, numPartitions, request.getPartitionIdsList());
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
    return RaftCalls.parse(
        () ->
            new PlacementRequest(shuffle, partitions, request.getEpoch(), request.getReplicate()));
  }

  /**
   * Grants each worker of the placement the reservation of the shuffle's partitions (a placement
   * grant), and each replica worker its link from the primary (a replica grant), once each.
   */
  private static void addGrants(
      RequestSlotsResponse.Builder b,
      ShuffleId shuffle,
      int numPartitions,
      List<PartitionLocation> placed,
      Secret cluster) {
    for (PartitionLocation l : placed) {
      for (PartitionLocation copy : l.copies()) {
        String worker = copy.worker().value();
        if (!b.containsPlacementGrants(worker)) {
          b.putPlacementGrants(
              worker,
              ByteString.copyFrom(PlacementGrants.grant(cluster, shuffle, numPartitions, worker)));
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

  CompletableFuture<Message> unregisterShuffle(UnregisterShuffleRequest request) {
    ShuffleId shuffle = IdMapper.shuffleId(request.getShuffle());
    return calls
        .submit(new StateCommand.UnregisterShuffle(shuffle))
        .thenApply(applied -> RaftCalls.EMPTY);
  }
}
