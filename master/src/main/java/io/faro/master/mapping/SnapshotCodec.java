package io.faro.master.mapping;

import static io.faro.common.id.IdMapper.parse;
import static io.faro.common.id.IdMapper.shuffleId;
import static io.faro.master.mapping.LogCodec.admissionCommand;
import static io.faro.master.mapping.LogCodec.admissionRules;
import static io.faro.master.mapping.LogCodec.registration;
import static io.faro.master.mapping.LogCodec.rules;
import static io.faro.master.mapping.ProtoMapper.admission;
import static io.faro.master.mapping.ProtoMapper.appId;
import static io.faro.master.mapping.ProtoMapper.profile;
import static io.faro.master.mapping.ProtoMapper.toProto;
import static io.faro.master.mapping.ProtoMapper.workerId;

import io.faro.common.admission.AdmissionRules;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.version.Compatibility;
import io.faro.common.version.FeatureLevel;
import io.faro.master.state.MasterStateView;
import io.faro.master.state.RegisteredApp;
import io.faro.master.state.RegisteredShuffle;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.StateCommand.RegisterWorker;
import io.faro.master.state.WorkerAdmission;
import io.faro.proto.AppStateP;
import io.faro.proto.MasterSnapshot;
import io.faro.proto.RecentAllocationP;
import io.faro.proto.RegisterWorkerCommand;
import io.faro.proto.SetWorkerAdmissionCommand;
import io.faro.proto.ShuffleStateP;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The masters' snapshot format: the whole replicated state (workers with their admission, apps,
 * shuffles with their slot counts, admission rules) as one message, and back. A durable format,
 * like the log's ({@link LogCodec}, whose records it reuses): a snapshot written by one release is
 * installed by the next.
 */
public final class SnapshotCodec {
  private SnapshotCodec() {}

  /** The state {@code view} as of the log entry {@code index} of {@code term}. */
  public static MasterSnapshot encode(MasterStateView view, long term, long index) {
    MasterSnapshot.Builder b = MasterSnapshot.newBuilder().setTerm(term).setIndex(index);
    for (RegisteredWorker w : view.workers().values()) {
      b.addWorkers(registration(new RegisterWorker(w.id(), w.endpoint(), w.disks())));
      b.putWorkerRegisteredAtMs(w.id().value(), w.registeredAtMs());
      if (!w.alive()) {
        b.addLostWorkers(w.id().value());
      }
      if (w.admission() != WorkerAdmission.ACTIVE) {
        b.addWorkerAdmissions(admissionCommand(w.id().value(), w.admission(), w.admissionReason()));
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
      b.setAdmissionRules(rules(view.admission()));
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
    // At level 1 neither field is set: the snapshot is then one the releases before feature levels
    // install as their own.
    if (view.featureLevel() > 1) {
      b.setFormatVersion(FeatureLevel.snapshotFormat(view.featureLevel()));
      b.setFeatureLevel(view.featureLevel());
    }
    return b.build();
  }

  /**
   * The state a snapshot holds: INVALID_REQUEST when it is malformed; UNSUPPORTED_VERSION when a
   * newer release wrote it (a format or a feature level beyond this one's), which this master must
   * not load.
   */
  public static MasterStateView decode(MasterSnapshot p) {
    if (p.getFormatVersion() > FeatureLevel.snapshotFormat(FeatureLevel.MAX)) {
      throw new FaroException(
          ErrorCode.UNSUPPORTED_VERSION,
          "the snapshot of log index "
              + p.getIndex()
              + " has format "
              + p.getFormatVersion()
              + ", newer than this Faro ("
              + Compatibility.release()
              + ") reads ("
              + FeatureLevel.snapshotFormat(FeatureLevel.MAX)
              + "): start this master from the release that wrote it or a later one");
    }
    if (p.getFeatureLevel() > FeatureLevel.MAX) {
      throw FeatureLevel.unsupported(
          p.getFeatureLevel(), "the snapshot of log index " + p.getIndex());
    }
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
    MasterStateView view =
        MasterStateView.of(workers, apps, shuffles, admissionRules(p.getAdmissionRules()));
    return new MasterStateView(
        view.workers(),
        view.apps(),
        view.shuffles(),
        view.admission(),
        Math.max(1, p.getFeatureLevel()));
  }
}
