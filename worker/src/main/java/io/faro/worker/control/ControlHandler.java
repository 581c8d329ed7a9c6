package io.faro.worker.control;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.auth.PlacementGrants;
import io.faro.common.auth.ReplicaGrants;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.log.LogSafe;
import io.faro.common.network.Futures;
import io.faro.common.network.PeerProtocol;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.common.version.ClusterLevel;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.MessageType;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ReserveSlotsResponse;
import io.faro.proto.StopWorkerRequest;
import io.faro.proto.StopWorkerResponse;
import io.faro.proto.WorkerStateP;
import io.faro.worker.auth.AppAccess;
import io.faro.worker.partition.LocationKeys;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.SealReport;
import io.faro.worker.protocol.ProtoMapper;
import io.faro.worker.status.WorkerStatusSampler;
import io.faro.worker.storage.Disk;
import io.netty.channel.Channel;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Serves the RPC port: the lifecycle manager reserves partition locations and commits shuffles;
 * benchmarks and operators ask for the process's status, and operators stop the worker. A commit is
 * answered from the flusher threads once every file is closed, a stop once it sealed; the event
 * loop only starts them.
 */
public final class ControlHandler implements RequestHandler {
  /** The requests this port serves. */
  public static final List<MessageType> SERVED =
      List.of(
          MessageType.RESERVE_SLOTS_REQUEST,
          MessageType.COMMIT_FILES_REQUEST,
          MessageType.STOP_WORKER_REQUEST,
          MessageType.WORKER_STATUS_REQUEST);

  /** Stops this worker when an operator asks (bin/faro admin stop-worker). */
  @FunctionalInterface
  public interface Stopper {
    /**
     * Seals (when {@code graceful}) and then asks the process to exit; the future completes, with
     * what was sealed, before the worker closes.
     *
     * @throws FaroException INVALID_REQUEST when {@code worker} is not this worker's id
     */
    CompletableFuture<SealReport> stop(WorkerId worker, boolean graceful);
  }

  private final PartitionStore store;
  private final WorkerStatusSampler status;
  private final Supplier<WorkerStateP> state;
  private final Stopper stopper;
  private final AuthSettings auth;
  private final Supplier<String> workerId;
  private final ClusterLevel level;

  /**
   * @param state what the worker is doing now, for the status answer
   * @param auth with authentication on, the cluster secret that replica grants are checked with
   */
  public ControlHandler(
      PartitionStore store,
      WorkerStatusSampler status,
      Supplier<WorkerStateP> state,
      Stopper stopper,
      AuthSettings auth) {
    this(store, status, state, stopper, auth, () -> null, new ClusterLevel());
  }

  /**
   * @param workerId this worker's id as the masters know it (null until it is known), which
   *     placement grants name
   * @param level the cluster's feature level as the masters last said: only at level 1 does a
   *     connection of protocol 1 (an application of a release before placement grants) reserve
   *     without one
   */
  public ControlHandler(
      PartitionStore store,
      WorkerStatusSampler status,
      Supplier<WorkerStateP> state,
      Stopper stopper,
      AuthSettings auth,
      Supplier<String> workerId,
      ClusterLevel level) {
    this.workerId = requireNonNull(workerId, "workerId is null");
    this.level = requireNonNull(level, "level is null");
    this.auth = requireNonNull(auth, "auth is null");
    this.store = requireNonNull(store, "store is null");
    this.status = requireNonNull(status, "status is null");
    this.state = requireNonNull(state, "state is null");
    this.stopper = requireNonNull(stopper, "stopper is null");
  }

  /**
   * Stopping the worker is an operator's call (the admin secret); reserving and committing a
   * shuffle's partitions are its application's (that app's secret); the status is open.
   */
  @Override
  public Optional<String> refusal(MessageType type, Message meta, Identity who) {
    return switch (type) {
      case STOP_WORKER_REQUEST -> Identity.require(Identity.ADMIN, who, type);
      case RESERVE_SLOTS_REQUEST ->
          AppAccess.refusal(store, ((ReserveSlotsRequest) meta).getShuffle(), who, type);
      case COMMIT_FILES_REQUEST ->
          AppAccess.refusal(store, ((CommitFilesRequest) meta).getShuffle(), who, type);
      default -> Optional.empty();
    };
  }

  /** The worker's status is open to anyone (benchmarks, operators' tools). */
  @Override
  public Set<MessageType> openToAnyone() {
    return Set.of(MessageType.WORKER_STATUS_REQUEST);
  }

  @Override
  public void handle(Request request, Responder responder) {
    try {
      switch (request.type()) {
        case RESERVE_SLOTS_REQUEST ->
            reserve(request.meta(ReserveSlotsRequest.class), request.channel(), responder);
        case COMMIT_FILES_REQUEST -> commit(request.meta(CommitFilesRequest.class), responder);
        case STOP_WORKER_REQUEST -> stop(request.meta(StopWorkerRequest.class), responder);
        case WORKER_STATUS_REQUEST ->
            responder.respond(
                ProtoMapper.toProto(status.status()).toBuilder()
                    .setAppendedBytes(store.counters().appendedBytes())
                    .setReplicatedBytes(store.counters().forwardedBytes())
                    .setSplitAnswers(store.counters().splitAnswers())
                    .setFetchedChunks(store.counters().fetchedChunks())
                    .setRestoredLocations(store.counters().restoredLocations())
                    .setRestoredSealedLocations(store.counters().restoredSealedLocations())
                    .setSealedLocations(store.counters().sealedLocations())
                    .setState(state.get())
                    .addAllDiskHealth(
                        store.disks().all().stream().map(d -> d.health().describe()).toList())
                    .addAllDiskUsedBytes(store.disks().all().stream().map(Disk::usedBytes).toList())
                    .addAllDiskTiers(
                        store.disks().all().stream().map(d -> d.tier().configName()).toList())
                    .addAllDiskFlushMsPerMib(
                        store.disks().all().stream().map(Disk::reportedFlushMsPerMiB).toList())
                    .addAllDiskReadMsPerMib(
                        store.disks().all().stream().map(Disk::reportedReadMsPerMiB).toList())
                    .build());
        default ->
            responder.fail(
                ErrorCode.UNSUPPORTED_MESSAGE, request.type() + " is not served on the RPC port");
      }
    } catch (FaroException e) {
      responder.fail(e.code(), e.getMessage());
    }
  }

  private void reserve(ReserveSlotsRequest reserve, Channel channel, Responder responder) {
    Identity who = Identity.of(channel);
    ShuffleId shuffle = IdMapper.shuffleId(reserve.getShuffle());
    // Before anything proportional to the request is built.
    store.checkReserveSize(shuffle, reserve.getLocationsCount());
    if (auth.enabled()) {
      checkReplicaGrants(shuffle, reserve);
      // A client of protocol 1 knows no placement grants: taken without one only while the
      // cluster runs at level 1, as the releases before grants took it.
      boolean ungranted =
          PeerProtocol.of(channel) < 2
              && level.knownAtFirstLevel()
              && reserve.getPlacementGrant().isEmpty();
      if (ungranted) {
        checkPartitionRange(shuffle, reserve);
      } else {
        checkPlacementGrant(shuffle, reserve);
      }
    }
    store.reserve(
        shuffle,
        reserve.getOwnerToken(),
        AppAccess.nonceOf(who),
        reserve.getLocationsList().stream().map(ProtoMapper::reservation).toList());
    responder.respond(ReserveSlotsResponse.getDefaultInstance());
  }

  /**
   * Refuses a replica location the masters did not place: this worker would forward the app's
   * pushes there and prove the cluster secret to it ({@link io.faro.common.auth.ReplicaGrants}).
   */
  private void checkReplicaGrants(ShuffleId shuffle, ReserveSlotsRequest reserve) {
    Secret cluster = auth.cluster().orElseThrow();
    for (PartitionLocationP location : reserve.getLocationsList()) {
      if (!location.hasReplica()) {
        continue;
      }
      PartitionLocationP replica = location.getReplica();
      ByteString grant = reserve.getReplicaGrantsMap().get(replica.getWorkerId());
      if (grant == null
          || !ReplicaGrants.valid(
              cluster,
              shuffle,
              replica.getWorkerId(),
              replica.getEndpoint().getHost(),
              replica.getEndpoint().getPushPort(),
              grant.toByteArray())) {
        throw new FaroException(
            ErrorCode.UNAUTHENTICATED,
            "the replica of partition "
                + location.getPartitionId()
                + " epoch "
                + location.getEpoch()
                + " of shuffle "
                + shuffle
                + " at "
                + LogSafe.id(replica.getEndpoint().getHost())
                + ":"
                + replica.getEndpoint().getPushPort()
                + " was not placed by the masters (no valid replica grant)");
      }
    }
  }

  /**
   * Refuses a reservation the masters did not place here: a grant for this shuffle, of its
   * partition count, on this worker ({@link io.faro.common.auth.PlacementGrants}), and no partition
   * at or beyond that count.
   */
  private void checkPlacementGrant(ShuffleId shuffle, ReserveSlotsRequest reserve) {
    String self = workerId.get();
    int numPartitions = reserve.getNumPartitions();
    if (self == null
        || numPartitions <= 0
        || !PlacementGrants.valid(
            auth.cluster().orElseThrow(),
            shuffle,
            numPartitions,
            self,
            reserve.getPlacementGrant().toByteArray())) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "a reservation of shuffle "
              + shuffle
              + " on worker "
              + LogSafe.id(String.valueOf(self))
              + " was not placed by the masters (no valid placement grant): a driver reserves only"
              + " what the masters placed");
    }
    checkPartitionRange(shuffle, reserve);
  }

  /**
   * Refuses a partition at or beyond the count the reservation states (granted, or from a client of
   * protocol 1, which states none: 0).
   */
  private static void checkPartitionRange(ShuffleId shuffle, ReserveSlotsRequest reserve) {
    int numPartitions = reserve.getNumPartitions();
    if (numPartitions <= 0) {
      return;
    }
    for (PartitionLocationP location : reserve.getLocationsList()) {
      if (location.getPartitionId() < 0 || location.getPartitionId() >= numPartitions) {
        throw new FaroException(
            ErrorCode.INVALID_REQUEST,
            "partition "
                + location.getPartitionId()
                + " of shuffle "
                + shuffle
                + " is not one of the "
                + numPartitions
                + " the masters placed");
      }
    }
  }

  private void stop(StopWorkerRequest stop, Responder responder) {
    stopper
        .stop(
            IdMapper.parse(() -> new WorkerId(stop.getWorkerId()), "worker_id"), stop.getGraceful())
        .whenComplete(
            (outcome, error) -> {
              if (error != null) {
                responder.fail(Futures.unwrap(error));
              } else {
                responder.respond(
                    StopWorkerResponse.newBuilder()
                        .setSealedLocations(outcome.sealedLocations())
                        .setSealedShuffles(outcome.sealedShuffles())
                        .setUnsealedLocations(outcome.failedLocations())
                        .build());
              }
            });
  }

  private void commit(CommitFilesRequest commit, Responder responder) {
    ShuffleId shuffle = IdMapper.shuffleId(commit.getShuffle());
    LocationKeys report = asked(commit);
    store
        .commit(shuffle, commit.getOwnerToken())
        .whenComplete(
            (result, error) -> {
              if (error != null) {
                responder.fail(
                    new FaroException(
                        ErrorCode.COMMIT_FAILED,
                        "commit of shuffle " + shuffle + " failed: " + error,
                        error));
              } else {
                responder.respond(
                    report == null
                        ? ProtoMapper.toProto(result)
                        : ProtoMapper.toProto(result, report));
              }
            });
  }

  /**
   * The locations a commit asks its answer to report, or null for every one (a lifecycle manager
   * before asked_locations). Bounded by the request's size (faro.network.max.request.size), already
   * received.
   */
  private static LocationKeys asked(CommitFilesRequest commit) {
    if (!commit.getReportOnlyAsked()) {
      return null;
    }
    long[] keys = new long[commit.getAskedLocationsCount()];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = commit.getAskedLocations(i);
    }
    return LocationKeys.of(keys);
  }
}
