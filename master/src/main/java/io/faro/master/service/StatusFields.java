package io.faro.master.service;

import io.faro.proto.MasterStatusResponse;
import io.faro.proto.WorkerAdmissionP;
import io.faro.proto.WorkerStatusP;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Status as named fields (JSON keys), in one order for every report: the HTTP API's answers and
 * {@code bin/faro admin}'s {@code --json}. Keys are added, never renamed: scripts read them.
 */
public final class StatusFields {
  private StatusFields() {}

  /**
   * A master's own view as report fields (JSON keys), in one order for every report: the HTTP
   * status page and {@code bin/faro admin masters}.
   */
  public static Map<String, Object> master(MasterStatusResponse s) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("endpoint", s.getRpcEndpoint());
    out.put("id", s.getMasterId());
    out.put("role", s.getRole());
    out.put("term", s.getTerm());
    out.put("applied_index", s.getAppliedIndex());
    out.put("commit_index", s.getCommitIndex());
    out.put("leader_id", s.getLeaderId());
    out.put("leader_ready", s.getLeaderReady());
    out.put("pid", s.getPid());
    out.put("snapshot_index", s.getSnapshotIndex());
    out.put("log_start_index", s.getLogStartIndex());
    out.put("workers", s.getWorkers());
    out.put("alive_workers", s.getAliveWorkers());
    out.put("apps", s.getApps());
    out.put("shuffles", s.getShuffles());
    out.put("peers", s.getPeersList());
    // A master from before feature levels states none of these: level 1, protocol 1.
    out.put("release", s.getRelease().isEmpty() ? "before feature levels" : s.getRelease());
    out.put("feature_level", Math.max(1, s.getFeatureLevel()));
    out.put("min_feature_level", Math.max(1, s.getMinFeatureLevel()));
    out.put("max_feature_level", Math.max(1, s.getMaxFeatureLevel()));
    out.put("protocol_version", Math.max(1, s.getProtocolVersion()));
    return out;
  }

  /**
   * One worker of a cluster status as named fields: what {@code bin/faro admin workers --json} and
   * the HTTP API's {@code /api/v1/workers} show.
   */
  public static Map<String, Object> worker(WorkerStatusP w) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("id", w.getWorkerId());
    row.put("host", w.getEndpoint().getHost());
    row.put("rpc_port", w.getEndpoint().getRpcPort());
    row.put("push_port", w.getEndpoint().getPushPort());
    row.put("fetch_port", w.getEndpoint().getFetchPort());
    row.put("alive", w.getAlive());
    // A worker the masters declared lost says nothing: its last state is stale.
    row.put("state", w.getAlive() ? workerState(w) : "lost");
    row.put("admission", admissionName(w.getAdmission()));
    row.put("admission_reason", w.getAdmissionReason());
    row.put("started_at_ms", w.getStartedAtMs());
    row.put("last_heartbeat_ms", w.getLastHeartbeatMs());
    row.put("allocated_slots", w.getAllocatedSlots());
    row.put(
        "disks",
        w.getDisksList().stream()
            .map(
                d -> {
                  Map<String, Object> disk = new LinkedHashMap<>();
                  disk.put("index", d.getIndex());
                  disk.put("path", d.getPath());
                  disk.put(
                      "tier",
                      d.getTier().name().replaceFirst("^DISK_TIER_", "").toLowerCase(Locale.ROOT));
                  disk.put("capacity_bytes", d.getCapacityBytes());
                  return disk;
                })
            .toList());
    return row;
  }

  private static String workerState(WorkerStatusP w) {
    return switch (w.getState()) {
      case STOPPING -> "stopping";
      case DRAINING -> "draining";
      case DRAINED -> "drained";
      default -> "serving";
    };
  }

  private static String admissionName(WorkerAdmissionP admission) {
    return switch (admission) {
      case ADMISSION_EXCLUDED -> "excluded";
      case ADMISSION_DECOMMISSIONING -> "decommissioning";
      case ADMISSION_DECOMMISSIONED -> "decommissioned";
      default -> "active";
    };
  }
}
