package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.network.Futures;
import io.faro.master.mapping.ProtoMapper;
import io.faro.master.placement.DiskLoad;
import io.faro.master.placement.WorkerReport;
import io.faro.master.placement.WorkerState;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.StateCommand;
import io.faro.master.state.StateReader;
import io.faro.master.state.WorkerAdmission;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workers' RPCs: registration (a Raft entry) and heartbeats (not logged: they update the {@link
 * LoadView}, and are answered with what the worker must do: register again, drain, delete expired
 * shuffles). Only a change of membership becomes a Raft entry.
 */
final class WorkerRpcs {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerRpcs.class);

  /** Most disks a worker may report: far more than any machine has. */
  static final int MAX_DISKS = 1024;

  private final RaftCalls calls;
  private final RaftNode raft;
  private final LoadView loads;

  WorkerRpcs(RaftCalls calls, LoadView loads) {
    this.calls = requireNonNull(calls, "calls is null");
    this.raft = calls.raft();
    this.loads = requireNonNull(loads, "loads is null");
  }

  CompletableFuture<Message> register(RegisterWorkerRequest request) {
    WorkerId worker = ProtoMapper.workerId(request.getWorkerId());
    requireFewDisks(request.getDisksCount(), "worker " + worker + " registers ");
    StateCommand command =
        RaftCalls.parse(
            () ->
                new StateCommand.RegisterWorker(
                    worker,
                    IdMapper.endpoint(request.getEndpoint()),
                    ProtoMapper.disks(request.getDisksList())));
    return calls
        .submit(command)
        .thenApply(
            applied -> {
              loads.workerRegistered(worker, calls.now());
              return RegisterWorkerResponse.newBuilder().setFeatureLevel(featureLevel()).build();
            });
  }

  /** The cluster's feature level, which tells a worker the oldest protocol it takes. */
  private int featureLevel() {
    return raft.read(StateReader::featureLevel);
  }

  private static void requireFewDisks(int disks, String what) {
    if (disks > MAX_DISKS) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED, what + disks + " disks; at most " + MAX_DISKS);
    }
  }

  CompletableFuture<Message> heartbeat(WorkerHeartbeatRequest request) {
    WorkerId worker = ProtoMapper.workerId(request.getWorkerId());
    requireFewDisks(request.getDisksCount(), "heartbeat of worker " + worker + " reports ");
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
    // Only the leader answers with expired shuffles: a follower does not look for them (a
    // thousand lookups a heartbeat on a large cluster, on every master).
    boolean leading = raft.isLeaderReady();
    Check check =
        raft.read(
            state ->
                new Check(
                    state.worker(worker),
                    state.workers().size(),
                    leading
                        ? reported.stream().filter(shuffle -> !state.hasShuffle(shuffle)).toList()
                        : List.of()));
    // Every master keeps the loads it hears of the workers it knows; of others (a follower may
    // lag behind a fresh registration) only the time, and a bounded number of them.
    if (check.registered().isPresent()) {
      loads.workerHeartbeat(worker, calls.now(), disks, report);
      loads.workerHolds(worker, bytesByApp(reported, request.getShuffleBytesList()));
    } else {
      loads.unknownWorkerHeartbeat(worker, calls.now(), check.knownWorkers());
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
              .setFeatureLevel(featureLevel())
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
                          .setFeatureLevel(fresh.featureLevel())
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
    return calls
        .submit(
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
                throw new CompletionException(cause);
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
                  .setFeatureLevel(featureLevel())
                  .build();
            });
  }

  /**
   * A heartbeat's bytes per shuffle summed per app; nothing when the two lists do not pair up (an
   * older worker sends no bytes), and a negative count is none.
   */
  private static Map<AppId, Long> bytesByApp(List<ShuffleId> shuffles, List<Long> bytes) {
    Map<AppId, Long> byApp = new HashMap<>();
    if (shuffles.size() == bytes.size()) {
      for (int i = 0; i < shuffles.size(); i++) {
        byApp.merge(shuffles.get(i).app(), Math.max(0L, bytes.get(i)), Long::sum);
      }
    }
    return byApp;
  }
}
