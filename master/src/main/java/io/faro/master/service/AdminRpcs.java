package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.WorkerId;
import io.faro.common.log.LogSafe;
import io.faro.common.version.Compatibility;
import io.faro.common.version.FeatureLevel;
import io.faro.master.mapping.ProtoMapper;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.MasterStateView;
import io.faro.master.state.StateCommand;
import io.faro.master.state.WorkerAdmission;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.TransferLeaderRequest;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Status and operators' RPCs: the cluster's status (apps and shuffles only for members and
 * operators when the cluster authenticates), this master's own status, a worker's admission
 * (exclude, include, decommission) and a leader transfer.
 */
final class AdminRpcs {
  private static final Logger LOG = LoggerFactory.getLogger(AdminRpcs.class);

  /** How long a leader transfer may take: an election or two, plus catching up. */
  private static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(20);

  private final RaftCalls calls;
  private final RaftNode raft;
  private final LoadView loads;
  private final AuthSettings auth;

  AdminRpcs(RaftCalls calls, LoadView loads, AuthSettings auth) {
    this.calls = requireNonNull(calls, "calls is null");
    this.raft = calls.raft();
    this.loads = requireNonNull(loads, "loads is null");
    this.auth = requireNonNull(auth, "auth is null");
  }

  /**
   * The cluster's status. With authentication on, only members and operators see which apps and
   * shuffles it holds (ids name applications); anyone else, as an anonymous status tool, gets the
   * workers and the totals.
   */
  CompletableFuture<Message> clusterStatus(ClusterStatusRequest request, Identity who) {
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

  /** See {@link MasterRequestHandler#clusterStatusHere}. */
  ClusterStatusResponse clusterStatusHere(ClusterStatusRequest request, long applied) {
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

  /** See {@link MasterRequestHandler#masterStatus}. */
  MasterStatusResponse masterStatus() {
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
            .setRpcEndpoint(raft.rpcEndpoint())
            .setRelease(Compatibility.release())
            .setMinFeatureLevel(FeatureLevel.MIN)
            .setMaxFeatureLevel(FeatureLevel.MAX)
            .setProtocolVersion(Compatibility.PROTOCOL);
    raft.read(
        state -> {
          MasterStateView view = state.view();
          b.setWorkers(view.workers().size())
              .setAliveWorkers(state.aliveWorkers().size())
              .setApps(view.apps().size())
              .setShuffles(view.shuffles().size())
              .setFeatureLevel(state.featureLevel());
          return null;
        });
    return b.build();
  }

  CompletableFuture<Message> setWorkerAdmission(SetWorkerAdmissionRequest request) {
    WorkerId worker = ProtoMapper.workerId(request.getWorkerId());
    WorkerAdmission admission = ProtoMapper.admission(request.getAdmission());
    if (admission == WorkerAdmission.DECOMMISSIONED) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "a worker is decommissioned by the masters once it drained; decommission worker "
              + worker
              + " instead (bin/faro admin decommission-worker)");
    }
    return calls
        .submit(new StateCommand.SetWorkerAdmission(worker, admission, request.getReason()))
        .thenApply(
            applied -> {
              LOG.info(
                  "Worker {} is now {}{}",
                  worker,
                  admission.name().toLowerCase(Locale.ROOT),
                  request.getReason().isEmpty() ? "" : ": " + LogSafe.text(request.getReason()));
              return RaftCalls.EMPTY;
            });
  }

  CompletableFuture<Message> transferLeader(TransferLeaderRequest request) {
    String to = request.getTo().trim();
    if (to.isEmpty()) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST, "a leader transfer needs the id of the new leader");
    }
    return raft.transferLeadership(to, TRANSFER_TIMEOUT).thenApply(done -> RaftCalls.EMPTY);
  }
}
