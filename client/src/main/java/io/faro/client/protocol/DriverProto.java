package io.faro.client.protocol;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.admission.AppProfile;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.AppProfileP;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.CommittedPartitionP;
import io.faro.proto.EmptyResponse;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterAppResponse;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ReserveSlotsResponse;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerStatusP;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The driver side's protobuf edge towards the cluster: what the lifecycle manager asks the masters
 * (the app's registration and heartbeat, slots, lost workers) and the workers (reservations,
 * commits), built from and read into Faro's own types. The driver's other classes see no message of
 * these calls. Each method sends one request; the answers the lifecycle port gives executors are
 * built where those requests are read ({@code ExecutorRequests}, {@code CommittedFiles}).
 */
public final class DriverProto {
  private DriverProto() {}

  /** The masters' answer to a registration that authenticates: the app's nonce and secret. */
  public record Registration(String nonce, byte[] secret) {}

  /**
   * The masters' answer to a slot request: the locations, and the grants passed on, unread, with
   * the reservations of those locations (none from a cluster without authentication).
   */
  public static final class Slots {
    private final List<PartitionLocation> locations;
    private final RequestSlotsResponse answer;

    private Slots(RequestSlotsResponse answer) {
      this.answer = answer;
      this.locations = answer.getLocationsList().stream().map(IdMapper::location).toList();
    }

    /** The locations granted, primaries with their replicas, in the masters' order. */
    public List<PartitionLocation> locations() {
      return locations;
    }
  }

  /** What a worker committed of one location: its partition and epoch, bytes and chunks. */
  public record CommittedCopy(int partition, int epoch, long bytes, int chunks) {}

  /** A location whose file failed on the worker; epoch -1 when the worker did not say. */
  public record FailedCopy(int partition, int epoch) {}

  /** A worker's answer to a commit: the locations it committed, and those whose file failed. */
  public record Commit(List<CommittedCopy> committed, List<FailedCopy> failed) {}

  // ------------------------------------------------------------------ masters

  /**
   * Registers {@code app}, run by {@code profile} and proven later by {@code token}, waiting up to
   * {@code timeout}; empty from a cluster without authentication (or one older than it), which
   * answers with no credentials.
   */
  public static Optional<Registration> registerApp(
      MasterClient master, AppId app, byte[] token, AppProfile profile, Duration timeout) {
    Message answer =
        master.callBlocking(
            RegisterAppRequest.newBuilder()
                .setAppId(app.value())
                .setRegistrationToken(ByteString.copyFrom(token))
                .setProfile(profile(profile))
                .build(),
            Message.class,
            timeout);
    if (!(answer instanceof RegisterAppResponse registered)) {
      return Optional.empty();
    }
    return Optional.of(
        new Registration(registered.getAppNonce(), registered.getAppSecret().toByteArray()));
  }

  /** Heartbeats {@code app} to every master: one answer each, in the masters' order. */
  public static List<CompletableFuture<?>> heartbeat(
      MasterClient master, AppId app, AppProfile profile) {
    return List.copyOf(
        master.callEach(
            AppHeartbeatRequest.newBuilder()
                .setAppId(app.value())
                .setProfile(profile(profile))
                .build(),
            EmptyResponse.class));
  }

  /** Unregisters {@code app}: the masters free what it holds. */
  public static CompletableFuture<?> unregisterApp(MasterClient master, AppId app) {
    return master.call(
        UnregisterAppRequest.newBuilder().setAppId(app.value()).build(), EmptyResponse.class);
  }

  /**
   * Slots for {@code partitions} of {@code shuffle} (all {@code numPartitions} when empty) under
   * {@code epoch}, on none of {@code excluded} and on {@code avoided} only when the others cannot
   * take them. {@code continues}: the shuffle is a new generation of one the masters hold. Retried
   * for {@code retryFor} (usually {@link MasterClient#retryTimeout()}).
   */
  public static CompletableFuture<Slots> requestSlots(
      MasterClient master,
      ShuffleId shuffle,
      boolean continues,
      int numPartitions,
      List<Integer> partitions,
      int epoch,
      boolean replicate,
      Set<WorkerId> excluded,
      Set<WorkerId> avoided,
      Duration retryFor) {
    RequestSlotsRequest.Builder request =
        RequestSlotsRequest.newBuilder()
            .setShuffle(IdMapper.toProto(shuffle))
            .setContinuesShuffle(continues)
            .setNumPartitions(numPartitions)
            .addAllPartitionIds(partitions)
            .setEpoch(epoch)
            .setReplicate(replicate)
            // The same on every retry of this call (the master client resends this message).
            .setRequestId(UUID.randomUUID().toString());
    excluded.forEach(w -> request.addExcludedWorkers(w.value()));
    avoided.forEach(w -> request.addAvoidedWorkers(w.value()));
    return master
        .call(request.build(), RequestSlotsResponse.class, retryFor)
        .thenApply(DriverProto::slots);
  }

  /**
   * Reads the masters' answer to a slot request.
   *
   * @throws io.faro.common.error.FaroException INVALID_REQUEST when a location is malformed
   */
  public static Slots slots(RequestSlotsResponse answer) {
    return new Slots(answer);
  }

  /** Unregisters {@code shuffle}: the masters free its slots and the workers delete its files. */
  public static CompletableFuture<?> unregisterShuffle(MasterClient master, ShuffleId shuffle) {
    return master.call(
        UnregisterShuffleRequest.newBuilder().setShuffle(IdMapper.toProto(shuffle)).build(),
        EmptyResponse.class);
  }

  /**
   * The workers the masters list as lost (not alive). One page of one app and one shuffle is asked:
   * the answer is the list of workers.
   */
  public static CompletableFuture<Set<WorkerId>> lostWorkers(MasterClient master) {
    return master
        .call(ClusterStatusRequest.newBuilder().setPageSize(1).build(), ClusterStatusResponse.class)
        .thenApply(
            status -> {
              Set<WorkerId> lost = new HashSet<>();
              for (WorkerStatusP w : status.getWorkersList()) {
                if (!w.getAlive() && validWorkerId(w.getWorkerId())) {
                  lost.add(new WorkerId(w.getWorkerId()));
                }
              }
              return lost;
            });
  }

  /**
   * Whether {@code id} is one a worker can have: one that is not names no commit the driver waits
   * for, and must not hide the other lost workers of the same answer.
   */
  private static boolean validWorkerId(String id) {
    try {
      new WorkerId(id);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  // ------------------------------------------------------------------ workers

  /**
   * Reserves {@code locations} (some of the {@code slots} granted, all with a copy on {@code
   * worker}, at {@code rpc}) for {@code shuffle} of {@code numPartitions} partitions, owned by
   * {@code ownerToken}; passes on the masters' placement grant for {@code worker} and their replica
   * grants for the replicas these locations name.
   */
  public static CompletableFuture<?> reserve(
      ClientPool pool,
      HostPort rpc,
      WorkerId worker,
      ShuffleId shuffle,
      long ownerToken,
      int numPartitions,
      List<PartitionLocation> locations,
      Slots slots) {
    ReserveSlotsRequest.Builder b =
        ReserveSlotsRequest.newBuilder()
            .setShuffle(IdMapper.toProto(shuffle))
            .setOwnerToken(ownerToken)
            .setNumPartitions(numPartitions);
    ByteString placed = slots.answer.getPlacementGrantsMap().get(worker.value());
    if (placed != null) {
      b.setPlacementGrant(placed);
    }
    Map<String, ByteString> grants = slots.answer.getReplicaGrantsMap();
    locations.forEach(
        l -> {
          b.addLocations(IdMapper.toProto(l));
          l.replica()
              .map(r -> r.worker().value())
              .filter(grants::containsKey)
              .ifPresent(id -> b.putReplicaGrants(id, grants.get(id)));
        });
    return pool.call(rpc, b.build(), ReserveSlotsResponse.class);
  }

  /**
   * Commits {@code shuffle} on the worker at {@code rpc}, proven by {@code ownerToken}, waiting up
   * to {@code timeout} (the pool's own when null); the same request on every retry. The answer
   * reports the {@code asked} copies (those on this worker), and no other: a worker that holds a
   * million mostly empty locations answers about those some map wrote to. A worker of a release
   * before the asked locations answers every location.
   */
  public static CompletableFuture<Commit> commit(
      ClientPool pool,
      HostPort rpc,
      ShuffleId shuffle,
      long ownerToken,
      List<PartitionLocation> asked,
      Duration timeout) {
    CommitFilesRequest.Builder b =
        CommitFilesRequest.newBuilder()
            .setShuffle(IdMapper.toProto(shuffle))
            .setOwnerToken(ownerToken)
            .setReportOnlyAsked(true);
    for (PartitionLocation l : asked) {
      b.addAskedLocations(((long) l.partition() << 32) | (l.epoch() & 0xFFFFFFFFL));
    }
    CommitFilesRequest request = b.build();
    CompletableFuture<CommitFilesResponse> answer =
        timeout == null
            ? pool.call(rpc, request, CommitFilesResponse.class)
            : pool.call(rpc, request, CommitFilesResponse.class, timeout);
    return answer.thenApply(DriverProto::commit);
  }

  /** Reads a worker's answer to a commit; a failed partition without its epoch has epoch -1. */
  public static Commit commit(CommitFilesResponse response) {
    List<CommittedCopy> committed = new ArrayList<>(response.getCommittedCount());
    for (CommittedPartitionP c : response.getCommittedList()) {
      committed.add(
          new CommittedCopy(c.getPartitionId(), c.getEpoch(), c.getBytes(), c.getChunks()));
    }
    List<FailedCopy> failed = new ArrayList<>(response.getFailedPartitionIdsCount());
    for (int i = 0; i < response.getFailedPartitionIdsCount(); i++) {
      int epoch = i < response.getFailedEpochsCount() ? response.getFailedEpochs(i) : -1;
      failed.add(new FailedCopy(response.getFailedPartitionIds(i), epoch));
    }
    return new Commit(List.copyOf(committed), List.copyOf(failed));
  }

  /** The profile the masters keep of an app: its user, queue and name. */
  private static AppProfileP profile(AppProfile profile) {
    return AppProfileP.newBuilder()
        .setUser(profile.user())
        .setQueue(profile.queue())
        .setName(profile.name())
        .build();
  }
}
