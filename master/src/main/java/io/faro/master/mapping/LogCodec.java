package io.faro.master.mapping;

import static io.faro.common.id.IdMapper.endpoint;
import static io.faro.common.id.IdMapper.invalid;
import static io.faro.common.id.IdMapper.parse;
import static io.faro.common.id.IdMapper.shuffleId;
import static io.faro.master.mapping.ProtoMapper.admission;
import static io.faro.master.mapping.ProtoMapper.appId;
import static io.faro.master.mapping.ProtoMapper.disks;
import static io.faro.master.mapping.ProtoMapper.profile;
import static io.faro.master.mapping.ProtoMapper.toProto;
import static io.faro.master.mapping.ProtoMapper.workerId;

import io.faro.common.admission.AdmissionRule;
import io.faro.common.admission.AdmissionRules;
import io.faro.common.admission.Quota;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.version.Compatibility;
import io.faro.common.version.FeatureLevel;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.ApplyResult.Applied;
import io.faro.master.state.ApplyResult.Rejected;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.master.state.StateCommand.AllocateSlots;
import io.faro.master.state.StateCommand.RegisterApp;
import io.faro.master.state.StateCommand.RegisterWorker;
import io.faro.master.state.StateCommand.RemoveApp;
import io.faro.master.state.StateCommand.SetWorkerAdmission;
import io.faro.master.state.StateCommand.UnregisterShuffle;
import io.faro.master.state.StateCommand.WorkerLost;
import io.faro.master.state.WorkerAdmission;
import io.faro.proto.AdmissionRuleP;
import io.faro.proto.AllocateSlotsCommand;
import io.faro.proto.MasterCommand;
import io.faro.proto.MasterCommandResult;
import io.faro.proto.QuotaP;
import io.faro.proto.RegisterAppCommand;
import io.faro.proto.RegisterWorkerCommand;
import io.faro.proto.RemoveAppCommand;
import io.faro.proto.SetAdmissionRulesCommand;
import io.faro.proto.SetFeatureLevelCommand;
import io.faro.proto.SetWorkerAdmissionCommand;
import io.faro.proto.UnregisterShuffleCommand;
import io.faro.proto.WorkerLostCommand;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The masters' Raft log format: each state command as its log entry and back, and each command's
 * outcome as the state machine answers it. A durable format: entries written by one release are
 * read by the next (and, during a rolling change, by the one before), so a field is added, never
 * reused; the versioning of the log lives here. A malformed entry becomes a FaroException
 * INVALID_REQUEST that names the field.
 */
public final class LogCodec {
  private LogCodec() {}

  /** A command as its Raft log entry. */
  public static MasterCommand encode(StampedCommand stamped) {
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
          admissionCommand(c.worker().value(), c.admission(), c.reason()).toBuilder()
              .setOnlyIfDecommissioning(c.onlyIfDecommissioning()));
    } else if (command instanceof StateCommand.SetAdmissionRules c) {
      b.setSetAdmissionRules(rules(c.rules()));
    } else if (command instanceof StateCommand.SetFeatureLevel c) {
      b.setSetFeatureLevel(
          SetFeatureLevelCommand.newBuilder().setLevel(c.level()).setBootstrap(c.bootstrap()));
    } else {
      throw new IllegalArgumentException("unknown command " + command);
    }
    return b.build();
  }

  /**
   * Parses a log entry: INVALID_REQUEST when it is not a well-formed command; UNSUPPORTED_VERSION
   * when it is a command of a newer release (a kind this one does not know, or a feature level
   * beyond what it supports), which this master must not apply.
   */
  public static StampedCommand decode(MasterCommand p) {
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
          case SET_FEATURE_LEVEL -> featureLevel(p.getSetFeatureLevel());
          case COMMAND_NOT_SET -> {
            if (!p.getUnknownFields().asMap().isEmpty()) {
              throw new FaroException(
                  ErrorCode.UNSUPPORTED_VERSION,
                  "a master command of a kind this Faro ("
                      + Compatibility.release()
                      + ") does not know (field "
                      + p.getUnknownFields().asMap().keySet()
                      + "): a newer release wrote it");
            }
            throw invalid("master command has no command set");
          }
        };
    return parse(() -> new StampedCommand(p.getTimestampMs(), command), "timestamp_ms");
  }

  private static StateCommand.SetFeatureLevel featureLevel(SetFeatureLevelCommand p) {
    if (p.getLevel() > FeatureLevel.MAX) {
      throw FeatureLevel.unsupported(p.getLevel(), "a log entry");
    }
    return parse(
        () -> new StateCommand.SetFeatureLevel(p.getLevel(), p.getBootstrap()),
        "set_feature_level");
  }

  static RegisterWorkerCommand registration(RegisterWorker c) {
    return RegisterWorkerCommand.newBuilder()
        .setWorkerId(c.worker().value())
        .setEndpoint(IdMapper.toProto(c.endpoint()))
        .addAllDisks(c.disks().stream().map(ProtoMapper::toProto).toList())
        .build();
  }

  static RegisterWorker registration(RegisterWorkerCommand p) {
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

  /** A command's outcome as its state machine answers it. */
  public static MasterCommandResult encodeResult(ApplyResult result) {
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

  public static ApplyResult decodeResult(MasterCommandResult p) {
    if (!p.getApplied()) {
      return new Rejected(ErrorCode.fromProto(p.getErrorCode()), p.getErrorMessage());
    }
    return new Applied(p.getLocationsList().stream().map(IdMapper::location).toList());
  }

  static SetWorkerAdmissionCommand admissionCommand(
      String worker, WorkerAdmission admission, String reason) {
    return SetWorkerAdmissionCommand.newBuilder()
        .setWorkerId(worker)
        .setAdmission(toProto(admission))
        .setReason(reason)
        .build();
  }

  /** Rules as their log entry (also a snapshot's field). */
  public static SetAdmissionRulesCommand rules(AdmissionRules rules) {
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
}
