package io.faro.master.server;

import io.faro.master.raft.RaftNode;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.WorkerAdmission;
import io.faro.metrics.FaroMetrics;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * The master's gauges of its Raft node and of the replicated state, read at every scrape: role,
 * term and indexes from the local Raft server (no network), worker, app and shuffle counts from the
 * state under its read lock. A follower reports the state as far as it has applied it.
 */
final class MasterMetrics {
  private static final List<String> ROLES =
      List.of("leader", "follower", "candidate", "listener", "stopped");

  private MasterMetrics() {}

  static void register(FaroMetrics metrics, RaftNode raft) {
    for (String role : ROLES) {
      metrics.gauge(
          "faro_master_raft_role",
          "1 for this master's current Raft role, 0 for the others.",
          () -> raft.status().role().equals(role) ? 1 : 0,
          "role",
          role);
    }
    metrics.gauge("faro_master_raft_term", "Current Raft term.", () -> raft.status().term());
    metrics.gauge(
        "faro_master_raft_applied_index",
        "Index of the last log entry applied to this master's state.",
        () -> raft.status().appliedIndex());
    metrics.gauge(
        "faro_master_raft_commit_index",
        "Index of the last log entry this master knows committed.",
        () -> raft.status().commitIndex());
    metrics.gauge(
        "faro_master_raft_snapshot_index",
        "Index of the newest snapshot taken or loaded, -1 when none.",
        () -> raft.status().snapshotIndex());
    metrics.counter(
        "faro_master_raft_leader_changes",
        "Leader changes this master saw since it started.",
        raft::leaderChanges);
    workers(metrics, raft, "active", w -> w.alive() && w.admission() == WorkerAdmission.ACTIVE);
    for (WorkerAdmission a :
        List.of(
            WorkerAdmission.EXCLUDED,
            WorkerAdmission.DECOMMISSIONING,
            WorkerAdmission.DECOMMISSIONED)) {
      workers(
          metrics, raft, a.name().toLowerCase(Locale.ROOT), w -> w.alive() && w.admission() == a);
    }
    workers(metrics, raft, "lost", w -> !w.alive());
    metrics.gauge(
        "faro_master_apps",
        "Applications registered.",
        () -> raft.read(state -> state.apps().size()));
    metrics.gauge(
        "faro_master_shuffles",
        "Shuffles with slots.",
        () -> raft.read(state -> state.shuffles().size()));
  }

  private static void workers(
      FaroMetrics metrics, RaftNode raft, String state, Predicate<RegisteredWorker> in) {
    metrics.gauge(
        "faro_master_workers",
        "Registered workers by state: active (alive, takes slots), excluded, decommissioning and "
            + "decommissioned (alive, no new slots), lost (no heartbeat within "
            + "faro.master.worker.timeout).",
        () -> raft.read(s -> s.workers().values().stream().filter(in).count()),
        "state",
        state);
  }
}
