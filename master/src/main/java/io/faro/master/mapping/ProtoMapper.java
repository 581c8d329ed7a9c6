package io.faro.master.mapping;

import static io.faro.common.id.IdMapper.invalid;
import static io.faro.common.id.IdMapper.parse;

import io.faro.common.admission.AppProfile;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.master.placement.DiskLoad;
import io.faro.master.placement.DiskStatus;
import io.faro.master.placement.WorkerReport;
import io.faro.master.placement.WorkerState;
import io.faro.master.state.DiskSpec;
import io.faro.master.state.RegisteredShuffle;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.StateReader;
import io.faro.master.state.WorkerAdmission;
import io.faro.proto.AppProfileP;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskTierP;
import io.faro.proto.WorkerAdmissionP;
import io.faro.proto.WorkerStateP;
import io.faro.proto.WorkerStatusP;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The master's RPC mapping: ids, endpoints, disks and their loads, worker states and admission,
 * application profiles and the cluster status, between protobuf and the domain records. Everything
 * inside the module works on the domain records. The durable formats are apart, because they live
 * longer than a connection: the Raft log ({@link LogCodec}) and snapshots ({@link SnapshotCodec});
 * status as JSON fields is {@code service.StatusFields}. A malformed message becomes a
 * FaroException INVALID_REQUEST that names the field.
 */
public final class ProtoMapper {
  private ProtoMapper() {}

  public static AppId appId(String value) {
    return parse(() -> new AppId(value), "app_id");
  }

  public static WorkerId workerId(String value) {
    return parse(() -> new WorkerId(value), "worker_id");
  }

  public static DiskSpec disk(DiskSpecP p) {
    DiskTier tier =
        switch (p.getTier()) {
          case NVME -> DiskTier.NVME;
          case SSD -> DiskTier.SSD;
          case HDD -> DiskTier.HDD;
          default ->
              throw invalid(
                  "disk " + p.getPath() + " has no tier (expected " + DiskTier.allowed() + ")");
        };
    return parse(
        () -> new DiskSpec(p.getIndex(), p.getPath(), tier, p.getCapacityBytes()), "disks");
  }

  public static List<DiskSpec> disks(List<DiskSpecP> disks) {
    return disks.stream().map(ProtoMapper::disk).toList();
  }

  public static DiskSpecP toProto(DiskSpec d) {
    DiskTierP tier =
        switch (d.tier()) {
          case NVME -> DiskTierP.NVME;
          case SSD -> DiskTierP.SSD;
          case HDD -> DiskTierP.HDD;
        };
    return DiskSpecP.newBuilder()
        .setIndex(d.index())
        .setPath(d.path())
        .setTier(tier)
        .setCapacityBytes(d.capacityBytes())
        .build();
  }

  public static DiskLoad diskLoad(DiskLoadP p) {
    DiskStatus status =
        switch (p.getStatus()) {
          case FULL -> DiskStatus.FULL;
          case BROKEN -> DiskStatus.BROKEN;
          // A worker that reports no status has detected no problem with the disk.
          default -> DiskStatus.HEALTHY;
        };
    return new DiskLoad(
        p.getIndex(),
        p.getUsableBytes(),
        status,
        p.getActivePartitions(),
        p.getFlushMsPerMib(),
        p.getReadMsPerMib(),
        p.getReserveBytes());
  }

  public static WorkerStateP toProto(WorkerState state) {
    return switch (state) {
      case SERVING -> WorkerStateP.SERVING;
      case STOPPING -> WorkerStateP.STOPPING;
      case DRAINING -> WorkerStateP.DRAINING;
      case DRAINED -> WorkerStateP.DRAINED;
    };
  }

  /** A worker too old to say, or a value this master does not know, is taken as serving. */
  public static WorkerState workerState(WorkerStateP p) {
    return switch (p) {
      case STOPPING -> WorkerState.STOPPING;
      case DRAINING -> WorkerState.DRAINING;
      case DRAINED -> WorkerState.DRAINED;
      default -> WorkerState.SERVING;
    };
  }

  public static WorkerAdmissionP toProto(WorkerAdmission admission) {
    return switch (admission) {
      case ACTIVE -> WorkerAdmissionP.ADMISSION_ACTIVE;
      case EXCLUDED -> WorkerAdmissionP.ADMISSION_EXCLUDED;
      case DECOMMISSIONING -> WorkerAdmissionP.ADMISSION_DECOMMISSIONING;
      case DECOMMISSIONED -> WorkerAdmissionP.ADMISSION_DECOMMISSIONED;
    };
  }

  /** INVALID_REQUEST for a value this master does not know. */
  public static WorkerAdmission admission(WorkerAdmissionP p) {
    return switch (p) {
      case ADMISSION_ACTIVE -> WorkerAdmission.ACTIVE;
      case ADMISSION_EXCLUDED -> WorkerAdmission.EXCLUDED;
      case ADMISSION_DECOMMISSIONING -> WorkerAdmission.DECOMMISSIONING;
      case ADMISSION_DECOMMISSIONED -> WorkerAdmission.DECOMMISSIONED;
      case UNRECOGNIZED -> throw invalid("unknown worker admission");
    };
  }

  // ------------------------------------------------------------------ admission

  public static AppProfileP toProto(AppProfile profile) {
    return AppProfileP.newBuilder()
        .setUser(profile.user())
        .setQueue(profile.queue())
        .setName(profile.name())
        .setHost(profile.host())
        .build();
  }

  /** An application's profile as sent by a client or logged: each field bounded, as an id is. */
  public static AppProfile profile(AppProfileP p) {
    return new AppProfile(
        bounded(p.getUser(), "user"),
        bounded(p.getQueue(), "queue"),
        bounded(p.getName(), "name"),
        bounded(p.getHost(), "host"));
  }

  /** Longest user, queue or application name a registration may carry. */
  public static final int MAX_PROFILE_FIELD = 1024;

  private static String bounded(String value, String what) {
    if (value.length() > MAX_PROFILE_FIELD) {
      throw invalid(
          "the application's "
              + what
              + " has "
              + value.length()
              + " characters, more than "
              + MAX_PROFILE_FIELD);
    }
    return value;
  }

  /** Most apps and shuffles in one cluster status answer, and the page size when none is asked. */
  public static final int MAX_STATUS_PAGE = 10_000;

  public static final int DEFAULT_STATUS_PAGE = 1_000;

  /**
   * The cluster's status: every worker, and one page of apps and of shuffles as {@code request}
   * asks (bounded: a status answer must not grow with the number of apps), with what each worker's
   * latest heartbeat said it was doing.
   */
  public static ClusterStatusResponse clusterStatus(
      StateReader view,
      Map<WorkerId, Long> lastHeartbeatMs,
      Function<WorkerId, WorkerReport> reported,
      String leaderId,
      long appliedIndex,
      ClusterStatusRequest request) {
    int page =
        request.getPageSize() <= 0
            ? DEFAULT_STATUS_PAGE
            : Math.min(request.getPageSize(), MAX_STATUS_PAGE);
    ClusterStatusResponse.Builder b =
        ClusterStatusResponse.newBuilder()
            .setLeaderId(leaderId)
            .setAppliedIndex(appliedIndex)
            .setTotalApps(view.apps().size())
            .setTotalShuffles(view.shuffles().size());
    Map<WorkerId, Integer> slots = new HashMap<>();
    for (RegisteredShuffle shuffle : view.shuffles().values()) {
      shuffle.slotsPerWorker().forEach((worker, n) -> slots.merge(worker, n, Integer::sum));
    }
    for (RegisteredWorker w : view.workers().values()) {
      WorkerReport report = reported.apply(w.id());
      b.addWorkers(
          WorkerStatusP.newBuilder()
              .setWorkerId(w.id().value())
              .setEndpoint(IdMapper.toProto(w.endpoint()))
              .addAllDisks(w.disks().stream().map(ProtoMapper::toProto).toList())
              .setAlive(w.alive())
              .setAdmission(toProto(w.admission()))
              .setAdmissionReason(w.admissionReason())
              .setRegisteredAtMs(w.registeredAtMs())
              .setLastHeartbeatMs(lastHeartbeatMs.getOrDefault(w.id(), 0L))
              .setState(toProto(report.state()))
              .setStartedAtMs(report.startedAtMs())
              .setAllocatedSlots(slots.getOrDefault(w.id(), 0)));
    }
    String appsAfter = request.getAppsAfter();
    Iterable<AppId> apps =
        appsAfter.isEmpty()
            ? view.apps().keySet()
            : view.apps().tailMap(new AppId(appsAfter)).keySet();
    for (AppId app : apps) {
      if (app.value().equals(appsAfter)) {
        continue; // the cursor itself: exclusive
      }
      if (b.getAppsCount() == page) {
        b.setNextAppsAfter(b.getApps(page - 1));
        break;
      }
      b.addApps(app.value());
    }
    ShuffleId shufflesAfter =
        request.hasShufflesAfter() ? IdMapper.shuffleId(request.getShufflesAfter()) : null;
    Iterable<ShuffleId> shuffles =
        shufflesAfter == null
            ? view.shuffles().keySet()
            : view.shuffles().tailMap(shufflesAfter).keySet();
    for (ShuffleId shuffle : shuffles) {
      if (shuffle.equals(shufflesAfter)) {
        continue;
      }
      if (b.getShufflesCount() == page) {
        b.setNextShufflesAfter(b.getShuffles(page - 1));
        break;
      }
      b.addShuffles(IdMapper.toProto(shuffle));
    }
    return b.build();
  }
}
