package io.faro.master.mapping;

import static io.faro.common.id.IdMapper.endpoint;
import static io.faro.common.id.IdMapper.invalid;
import static io.faro.common.id.IdMapper.parse;
import static io.faro.common.id.IdMapper.shuffleId;

import io.faro.common.admission.AdmissionRule;
import io.faro.common.admission.AdmissionRules;
import io.faro.common.admission.AppProfile;
import io.faro.common.admission.Quota;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.master.placement.DiskLoad;
import io.faro.master.placement.DiskStatus;
import io.faro.master.placement.WorkerReport;
import io.faro.master.placement.WorkerState;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.ApplyResult.Applied;
import io.faro.master.state.ApplyResult.Rejected;
import io.faro.master.state.DiskSpec;
import io.faro.master.state.MasterStateView;
import io.faro.master.state.RegisteredApp;
import io.faro.master.state.RegisteredShuffle;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.master.state.StateCommand.AllocateSlots;
import io.faro.master.state.StateCommand.RegisterApp;
import io.faro.master.state.StateCommand.RegisterWorker;
import io.faro.master.state.StateCommand.RemoveApp;
import io.faro.master.state.StateCommand.SetWorkerAdmission;
import io.faro.master.state.StateCommand.UnregisterShuffle;
import io.faro.master.state.StateCommand.WorkerLost;
import io.faro.master.state.StateReader;
import io.faro.master.state.WorkerAdmission;
import io.faro.proto.AdmissionRuleP;
import io.faro.proto.AllocateSlotsCommand;
import io.faro.proto.AppProfileP;
import io.faro.proto.AppStateP;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskTierP;
import io.faro.proto.MasterCommand;
import io.faro.proto.MasterCommandResult;
import io.faro.proto.MasterSnapshot;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.QuotaP;
import io.faro.proto.RecentAllocationP;
import io.faro.proto.RegisterAppCommand;
import io.faro.proto.RegisterWorkerCommand;
import io.faro.proto.RemoveAppCommand;
import io.faro.proto.SetAdmissionRulesCommand;
import io.faro.proto.SetWorkerAdmissionCommand;
import io.faro.proto.ShuffleStateP;
import io.faro.proto.UnregisterShuffleCommand;
import io.faro.proto.WorkerAdmissionP;
import io.faro.proto.WorkerLostCommand;
import io.faro.proto.WorkerStateP;
import io.faro.proto.WorkerStatusP;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The master's one protobuf edge: ids, endpoints, disks and locations, log commands and their
 * results, snapshots and cluster status, both ways. Everything inside the module works on the
 * domain records; only RPC handlers and the Raft state machine see protobuf, through this class. A
 * malformed message becomes a FaroException INVALID_REQUEST that names the field.
 *
 * <p>Over 400 lines, knowingly: every master message and state record to and from protobuf, in one
 * place, so that the wire and log formats have one translator.
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

  // ------------------------------------------------------------------ log commands

  public static MasterCommand toProto(StampedCommand stamped) {
    MasterCommand.Builder b = MasterCommand.newBuilder().setTimestampMs(stamped.timestampMs());
    StateCommand command = stamped.command();
    if (command instanceof RegisterWorker c) {
      b.setRegisterWorker(registration(c));
    } else if (command instanceof WorkerLost c) {
      b.setWorkerLost(
          WorkerLostCommand.newBuilder().setWorkerId(c.worker().value()).setReason(c.reason()));
    } else if (command instanceof RegisterApp c) {
      b.setRegisterApp(
          RegisterAppCommand.newBuilder()
              .setAppId(c.app().value())
              .setNonce(c.nonce())
              .setProfile(toProto(c.profile())));
    } else if (command instanceof RemoveApp c) {
      b.setRemoveApp(RemoveAppCommand.newBuilder().setAppId(c.app().value()).setReason(c.reason()));
    } else if (command instanceof AllocateSlots c) {
      b.setAllocateSlots(
          AllocateSlotsCommand.newBuilder()
              .setShuffle(IdMapper.toProto(c.shuffle()))
              .setNumPartitions(c.numPartitions())
              .putAllSlotsPerWorker(slotsByName(c.slotsPerWorker()))
              .setRequestId(c.requestId()));
    } else if (command instanceof UnregisterShuffle c) {
      b.setUnregisterShuffle(
          UnregisterShuffleCommand.newBuilder().setShuffle(IdMapper.toProto(c.shuffle())));
    } else if (command instanceof SetWorkerAdmission c) {
      b.setSetWorkerAdmission(
          admission(c.worker().value(), c.admission(), c.reason()).toBuilder()
              .setOnlyIfDecommissioning(c.onlyIfDecommissioning()));
    } else if (command instanceof StateCommand.SetAdmissionRules c) {
      b.setSetAdmissionRules(toProto(c.rules()));
    } else {
      throw new IllegalArgumentException("unknown command " + command);
    }
    return b.build();
  }

  /** Parses a log entry; INVALID_REQUEST when it is not a well-formed command. */
  public static StampedCommand fromProto(MasterCommand p) {
    StateCommand command =
        switch (p.getCommandCase()) {
          case REGISTER_WORKER -> registration(p.getRegisterWorker());
          case WORKER_LOST ->
              new WorkerLost(
                  workerId(p.getWorkerLost().getWorkerId()), p.getWorkerLost().getReason());
          case REGISTER_APP ->
              new RegisterApp(
                  appId(p.getRegisterApp().getAppId()),
                  p.getRegisterApp().getNonce(),
                  profile(p.getRegisterApp().getProfile()));
          case REMOVE_APP ->
              new RemoveApp(appId(p.getRemoveApp().getAppId()), p.getRemoveApp().getReason());
          case ALLOCATE_SLOTS -> allocation(p.getAllocateSlots());
          case UNREGISTER_SHUFFLE ->
              new UnregisterShuffle(shuffleId(p.getUnregisterShuffle().getShuffle()));
          case SET_WORKER_ADMISSION ->
              new SetWorkerAdmission(
                  workerId(p.getSetWorkerAdmission().getWorkerId()),
                  admission(p.getSetWorkerAdmission().getAdmission()),
                  p.getSetWorkerAdmission().getReason(),
                  p.getSetWorkerAdmission().getOnlyIfDecommissioning());
          case SET_ADMISSION_RULES ->
              new StateCommand.SetAdmissionRules(admissionRules(p.getSetAdmissionRules()));
          case COMMAND_NOT_SET -> throw invalid("master command has no command set");
        };
    return parse(() -> new StampedCommand(p.getTimestampMs(), command), "timestamp_ms");
  }

  /**
   * A master's own view as report fields (JSON keys), in one order for every report: the HTTP
   * status page and {@code bin/faro admin masters}.
   */
  public static Map<String, Object> statusFields(MasterStatusResponse s) {
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
    return out;
  }

  /**
   * One worker of a cluster status as named fields: what {@code bin/faro admin workers --json} and
   * the HTTP API's {@code /api/v1/workers} show.
   */
  public static Map<String, Object> workerFields(WorkerStatusP w) {
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

  public static SetWorkerAdmissionCommand admission(
      String worker, WorkerAdmission admission, String reason) {
    return SetWorkerAdmissionCommand.newBuilder()
        .setWorkerId(worker)
        .setAdmission(toProto(admission))
        .setReason(reason)
        .build();
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

  private static RegisterWorkerCommand registration(RegisterWorker c) {
    return RegisterWorkerCommand.newBuilder()
        .setWorkerId(c.worker().value())
        .setEndpoint(IdMapper.toProto(c.endpoint()))
        .addAllDisks(c.disks().stream().map(ProtoMapper::toProto).toList())
        .build();
  }

  private static RegisterWorker registration(RegisterWorkerCommand p) {
    return new RegisterWorker(
        workerId(p.getWorkerId()), endpoint(p.getEndpoint()), disks(p.getDisksList()));
  }

  private static AllocateSlots allocation(AllocateSlotsCommand p) {
    ShuffleId shuffle = shuffleId(p.getShuffle());
    if (p.getSlotsPerWorkerCount() == 0) {
      // An entry of a master from before slots_per_worker: one location per partition.
      List<PartitionLocation> locations =
          p.getLocationsList().stream().map(IdMapper::location).toList();
      return parse(
          () -> new AllocateSlots(shuffle, p.getNumPartitions(), locations, p.getRequestId()),
          "allocate_slots");
    }
    return parse(
        () ->
            new AllocateSlots(
                shuffle,
                p.getNumPartitions(),
                slotsById(p.getSlotsPerWorkerMap()),
                p.getRequestId()),
        "allocate_slots");
  }

  private static Map<String, Integer> slotsByName(Map<WorkerId, Integer> slots) {
    Map<String, Integer> out = new LinkedHashMap<>();
    slots.forEach((worker, n) -> out.put(worker.value(), n));
    return out;
  }

  private static SortedMap<WorkerId, Integer> slotsById(Map<String, Integer> slots) {
    SortedMap<WorkerId, Integer> out = new TreeMap<>(Comparator.comparing(WorkerId::value));
    slots.forEach((worker, n) -> out.put(workerId(worker), n));
    return out;
  }

  public static MasterCommandResult toProto(ApplyResult result) {
    if (result instanceof Rejected r) {
      return MasterCommandResult.newBuilder()
          .setApplied(false)
          .setErrorCode(r.code().toProto())
          .setErrorMessage(r.message())
          .build();
    }
    Applied applied = (Applied) result;
    return MasterCommandResult.newBuilder()
        .setApplied(true)
        .addAllLocations(applied.locations().stream().map(IdMapper::toProto).toList())
        .build();
  }

  public static ApplyResult fromProto(MasterCommandResult p) {
    if (!p.getApplied()) {
      return new Rejected(ErrorCode.fromProto(p.getErrorCode()), p.getErrorMessage());
    }
    return new Applied(p.getLocationsList().stream().map(IdMapper::location).toList());
  }

  // ------------------------------------------------------------------ snapshots and status

  public static MasterSnapshot toSnapshot(MasterStateView view, long term, long index) {
    MasterSnapshot.Builder b = MasterSnapshot.newBuilder().setTerm(term).setIndex(index);
    for (RegisteredWorker w : view.workers().values()) {
      b.addWorkers(registration(new RegisterWorker(w.id(), w.endpoint(), w.disks())));
      b.putWorkerRegisteredAtMs(w.id().value(), w.registeredAtMs());
      if (!w.alive()) {
        b.addLostWorkers(w.id().value());
      }
      if (w.admission() != WorkerAdmission.ACTIVE) {
        b.addWorkerAdmissions(admission(w.id().value(), w.admission(), w.admissionReason()));
      }
    }
    for (RegisteredApp a : view.apps().values()) {
      b.addApps(
          AppStateP.newBuilder()
              .setAppId(a.id().value())
              .setRegisteredAtMs(a.registeredAtMs())
              .setNonce(a.nonce())
              .setProfile(toProto(a.profile())));
    }
    if (!view.admission().equals(AdmissionRules.NONE)) {
      b.setAdmissionRules(toProto(view.admission()));
    }
    for (RegisteredShuffle s : view.shuffles().values()) {
      ShuffleStateP.Builder shuffle =
          ShuffleStateP.newBuilder()
              .setShuffle(IdMapper.toProto(s.id()))
              .setNumPartitions(s.numPartitions());
      s.slotsPerWorker()
          .forEach((worker, slots) -> shuffle.putSlotsPerWorker(worker.value(), slots));
      for (RegisteredShuffle.RecentAllocation a : s.recentAllocations()) {
        RecentAllocationP.Builder recent =
            RecentAllocationP.newBuilder().setRequestId(a.requestId());
        a.slotsPerWorker()
            .forEach((worker, slots) -> recent.putSlotsPerWorker(worker.value(), slots));
        shuffle.addRecentAllocations(recent);
      }
      b.addShuffles(shuffle);
    }
    return b.build();
  }

  public static MasterStateView fromSnapshot(MasterSnapshot p) {
    Set<String> lost = Set.copyOf(p.getLostWorkersList());
    Map<String, SetWorkerAdmissionCommand> admissions = new HashMap<>();
    p.getWorkerAdmissionsList().forEach(a -> admissions.put(a.getWorkerId(), a));
    Map<WorkerId, RegisteredWorker> workers = new HashMap<>();
    for (RegisterWorkerCommand w : p.getWorkersList()) {
      RegisterWorker r = registration(w);
      long registeredAt = p.getWorkerRegisteredAtMsOrDefault(w.getWorkerId(), 0L);
      RegisteredWorker worker =
          new RegisteredWorker(
              r.worker(), r.endpoint(), r.disks(), registeredAt, !lost.contains(w.getWorkerId()));
      SetWorkerAdmissionCommand admission = admissions.get(w.getWorkerId());
      if (admission != null) {
        worker = worker.withAdmission(admission(admission.getAdmission()), admission.getReason());
      }
      workers.put(r.worker(), worker);
    }
    Map<AppId, RegisteredApp> apps = new HashMap<>();
    for (AppStateP a : p.getAppsList()) {
      apps.put(
          appId(a.getAppId()),
          new RegisteredApp(
              appId(a.getAppId()), a.getRegisteredAtMs(), a.getNonce(), profile(a.getProfile())));
    }
    Map<ShuffleId, RegisteredShuffle> shuffles = new HashMap<>();
    for (ShuffleStateP s : p.getShufflesList()) {
      Map<WorkerId, Integer> slots = new HashMap<>();
      s.getSlotsPerWorkerMap().forEach((worker, count) -> slots.put(workerId(worker), count));
      List<RegisteredShuffle.RecentAllocation> recent = new ArrayList<>();
      for (RecentAllocationP a : s.getRecentAllocationsList()) {
        Map<WorkerId, Integer> counts = new HashMap<>();
        a.getSlotsPerWorkerMap().forEach((worker, count) -> counts.put(workerId(worker), count));
        recent.add(RegisteredShuffle.RecentAllocation.of(a.getRequestId(), counts));
      }
      ShuffleId id = shuffleId(s.getShuffle());
      shuffles.put(
          id,
          parse(() -> RegisteredShuffle.of(id, s.getNumPartitions(), slots, recent), "shuffles"));
    }
    return MasterStateView.of(workers, apps, shuffles, admissionRules(p.getAdmissionRules()));
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

  public static SetAdmissionRulesCommand toProto(AdmissionRules rules) {
    SetAdmissionRulesCommand.Builder b =
        SetAdmissionRulesCommand.newBuilder().setSource(rules.source());
    for (AdmissionRule r : rules.rules()) {
      b.addRules(
          AdmissionRuleP.newBuilder()
              .setDeny(r.deny())
              .setUser(r.user())
              .setQueue(r.queue())
              .setNamePattern(r.namePattern())
              .setPercent(r.percent() == 100 ? 0 : r.percent()));
    }
    for (Quota q : rules.quotas()) {
      b.addQuotas(
          QuotaP.newBuilder()
              .setUser(q.byQueue() ? "" : q.name())
              .setQueue(q.byQueue() ? q.name() : "")
              .setMaxShuffles(q.maxShuffles())
              .setMaxPartitions(q.maxPartitions())
              .setMaxBytes(q.maxBytes()));
    }
    return b.build();
  }

  /** Rules from a log entry or snapshot; INVALID_REQUEST when one is malformed. */
  public static AdmissionRules admissionRules(SetAdmissionRulesCommand p) {
    return parse(
        () -> {
          List<AdmissionRule> rules = new ArrayList<>();
          for (AdmissionRuleP r : p.getRulesList()) {
            rules.add(
                new AdmissionRule(
                    r.getDeny(),
                    r.getUser(),
                    r.getQueue(),
                    r.getNamePattern(),
                    r.getPercent() == 0 ? 100 : r.getPercent()));
          }
          List<Quota> quotas = new ArrayList<>();
          for (QuotaP q : p.getQuotasList()) {
            boolean byQueue = !q.getQueue().isEmpty();
            quotas.add(
                new Quota(
                    byQueue,
                    byQueue ? q.getQueue() : q.getUser(),
                    q.getMaxShuffles(),
                    q.getMaxPartitions(),
                    q.getMaxBytes()));
          }
          return new AdmissionRules(rules, quotas, p.getSource());
        },
        "admission rules");
  }

  /**
   * Cluster status from the replicated state plus the leader's heartbeat times.
   *
   * @param lastHeartbeatMs leader time of each worker's latest heartbeat, where known
   */
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
