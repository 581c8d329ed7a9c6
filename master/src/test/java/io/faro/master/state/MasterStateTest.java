package io.faro.master.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.mapping.LogCodec;
import io.faro.master.mapping.SnapshotCodec;
import io.faro.master.state.ApplyResult.Applied;
import io.faro.master.state.ApplyResult.Rejected;
import io.faro.master.state.StateCommand.AllocateSlots;
import io.faro.master.state.StateCommand.RegisterApp;
import io.faro.master.state.StateCommand.RegisterWorker;
import io.faro.master.state.StateCommand.RemoveApp;
import io.faro.master.state.StateCommand.UnregisterShuffle;
import io.faro.master.state.StateCommand.WorkerLost;
import io.faro.proto.MasterSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class MasterStateTest {
  private static final WorkerId W1 = new WorkerId("w1");
  private static final WorkerId W2 = new WorkerId("w2");
  private static final AppId APP = new AppId("app-1");
  private static final ShuffleId SHUFFLE = new ShuffleId(APP, 0);

  private final MasterState state = new MasterState();
  private long clock = 1_000;

  private ApplyResult apply(StateCommand command) {
    return state.apply(new StampedCommand(clock++, command));
  }

  private static RegisterWorker register(WorkerId id, int disks) {
    return new RegisterWorker(
        id,
        endpoint(id),
        IntStream.range(0, disks)
            .mapToObj(i -> new DiskSpec(i, "/d" + i, DiskTier.HDD, 1L << 40))
            .toList());
  }

  private static WorkerEndpoint endpoint(WorkerId id) {
    return new WorkerEndpoint("host-" + id, 1, 2, 3);
  }

  private static List<PartitionLocation> locations(int partitions, WorkerId... workers) {
    List<PartitionLocation> result = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      WorkerId worker = workers[p % workers.length];
      result.add(new PartitionLocation(p, 0, Role.PRIMARY, worker, endpoint(worker), 0));
    }
    return result;
  }

  @Test
  void aDrainedWorkerIsDecommissionedOnlyIfNobodyIncludedItMeanwhile() {
    apply(register(W1, 1));
    apply(register(W2, 1));
    apply(new StateCommand.SetWorkerAdmission(W1, WorkerAdmission.DECOMMISSIONING, "retire"));
    apply(new StateCommand.SetWorkerAdmission(W2, WorkerAdmission.DECOMMISSIONING, "retire"));
    // W2's operator changed their mind before its drained report was applied.
    apply(new StateCommand.SetWorkerAdmission(W2, WorkerAdmission.ACTIVE, ""));

    assertThat(
            apply(
                new StateCommand.SetWorkerAdmission(
                    W1, WorkerAdmission.DECOMMISSIONED, "drained", true)))
        .isInstanceOf(Applied.class);
    assertThat(
            apply(
                new StateCommand.SetWorkerAdmission(
                    W2, WorkerAdmission.DECOMMISSIONED, "drained", true)))
        .isInstanceOfSatisfying(
            Rejected.class, r -> assertThat(r.message()).contains("no longer decommissioning"));

    assertThat(state.worker(W1).orElseThrow().admission())
        .isEqualTo(WorkerAdmission.DECOMMISSIONED);
    assertThat(state.worker(W2).orElseThrow().admission()).isEqualTo(WorkerAdmission.ACTIVE);
    // The condition travels in the log entry.
    StateCommand decoded =
        LogCodec.decode(
                LogCodec.encode(
                    new StampedCommand(
                        1,
                        new StateCommand.SetWorkerAdmission(
                            W1, WorkerAdmission.DECOMMISSIONED, "drained", true))))
            .command();
    assertThat(decoded)
        .isEqualTo(
            new StateCommand.SetWorkerAdmission(
                W1, WorkerAdmission.DECOMMISSIONED, "drained", true));
  }

  @Test
  void anOperatorsAdmissionOutlivesRestartsAndSnapshots() {
    assertThat(
            apply(new StateCommand.SetWorkerAdmission(W1, WorkerAdmission.EXCLUDED, "flaky disk")))
        .isInstanceOfSatisfying(
            ApplyResult.Rejected.class, r -> assertThat(r.message()).contains("w1"));
    apply(register(W1, 1));
    apply(register(W2, 1));
    apply(new StateCommand.SetWorkerAdmission(W1, WorkerAdmission.EXCLUDED, "flaky disk"));
    apply(new StateCommand.SetWorkerAdmission(W2, WorkerAdmission.DECOMMISSIONING, "upgrade"));

    // The worker restarts (lost, then registers again, with a new disk): still excluded.
    apply(new StateCommand.WorkerLost(W1, "no heartbeat"));
    apply(
        new RegisterWorker(
            W1, endpoint(W1), List.of(new DiskSpec(0, "/d0", DiskTier.SSD, 1L << 40))));
    RegisteredWorker w1 = state.worker(W1).orElseThrow();
    assertThat(w1.alive()).isTrue();
    assertThat(w1.admission()).isEqualTo(WorkerAdmission.EXCLUDED);
    assertThat(w1.admissionReason()).isEqualTo("flaky disk");
    assertThat(w1.takesSlots()).isFalse();

    // A snapshot keeps it; a follower that loads the snapshot agrees.
    MasterStateView loaded = SnapshotCodec.decode(SnapshotCodec.encode(state.view(), 3, 42));
    assertThat(loaded).isEqualTo(state.view());
    assertThat(loaded.workers().get(W2).admission()).isEqualTo(WorkerAdmission.DECOMMISSIONING);

    apply(new StateCommand.SetWorkerAdmission(W1, WorkerAdmission.ACTIVE, "fixed"));
    assertThat(state.worker(W1).orElseThrow().takesSlots()).isTrue();
    assertThat(state.worker(W1).orElseThrow().admissionReason()).isEmpty();
  }

  @Test
  void registerWorkerAddsAliveWorkerWithLeaderTime() {
    assertThat(apply(register(W1, 2))).isEqualTo(Applied.NOTHING);

    RegisteredWorker worker = state.worker(W1).orElseThrow();
    assertThat(worker.alive()).isTrue();
    assertThat(worker.registeredAtMs()).isEqualTo(1_000);
    assertThat(worker.disks()).hasSize(2);
    assertThat(state.aliveWorkers()).containsExactly(worker);
  }

  @Test
  void registeringTheSameWorkerAgainChangesNothing() {
    apply(register(W1, 2));
    MasterStateView before = state.view();

    apply(register(W1, 2));

    assertThat(state.view()).isEqualTo(before);
  }

  @Test
  void workerLostMarksItAndRegisterRevivesIt() {
    apply(register(W1, 1));
    apply(new WorkerLost(W1, "test"));
    assertThat(state.worker(W1).orElseThrow().alive()).isFalse();
    assertThat(state.aliveWorkers()).isEmpty();

    // Losing a lost or unknown worker is a no-op: the liveness check may repeat itself.
    assertThat(apply(new WorkerLost(W1, "again"))).isEqualTo(Applied.NOTHING);
    assertThat(apply(new WorkerLost(W2, "never seen"))).isEqualTo(Applied.NOTHING);
    assertThat(state.worker(W2)).isEmpty();

    apply(register(W1, 1));
    RegisteredWorker revived = state.worker(W1).orElseThrow();
    assertThat(revived.alive()).isTrue();
    assertThat(revived.registeredAtMs()).isEqualTo(1_004);
  }

  @Test
  void registerAppIsIdempotentAndKeepsFirstTime() {
    apply(new RegisterApp(APP));
    apply(new RegisterApp(APP));

    assertThat(state.appIds()).containsExactly(APP);
    assertThat(state.view().apps().get(APP).registeredAtMs()).isEqualTo(1_000);
  }

  @Test
  void admissionRulesAndWhoRunsAnAppSurviveASnapshot() {
    io.faro.common.admission.AppProfile ann =
        new io.faro.common.admission.AppProfile("ann", "etl", "nightly");
    apply(new RegisterApp(APP, "", ann));
    io.faro.common.admission.AdmissionRules rules =
        io.faro.common.admission.AdmissionRules.parse("deny user=guest\n", "file /etc/faro/a");
    apply(new StateCommand.SetAdmissionRules(rules));
    assertThat(state.admission()).isEqualTo(rules);

    MasterStateView restored = SnapshotCodec.decode(SnapshotCodec.encode(state.view(), 1, 2));
    assertThat(restored).isEqualTo(state.view());
    assertThat(restored.admission()).isEqualTo(rules);
    assertThat(restored.apps().get(APP).profile()).isEqualTo(ann);

    apply(new StateCommand.SetAdmissionRules(io.faro.common.admission.AdmissionRules.NONE));
    assertThat(state.admission().rules()).isEmpty();
  }

  @Test
  void theFirstRegistrationOfAnAppKeepsItsNonceThroughASnapshot() {
    apply(new RegisterApp(APP, "0123456789abcdef0123456789abcdef"));
    apply(new RegisterApp(APP, "fedcba9876543210fedcba9876543210"));

    assertThat(state.view().apps().get(APP).nonce()).isEqualTo("0123456789abcdef0123456789abcdef");
    MasterStateView restored = SnapshotCodec.decode(SnapshotCodec.encode(state.view(), 1, 2));
    assertThat(restored.apps().get(APP).nonce()).isEqualTo("0123456789abcdef0123456789abcdef");
  }

  @Test
  void allocateSlotsRecordsTheShuffleAndItsSlotCounts() {
    apply(register(W1, 1));
    apply(register(W2, 1));
    apply(new RegisterApp(APP));
    List<PartitionLocation> locations = locations(5, W1, W2);

    ApplyResult result = apply(new AllocateSlots(SHUFFLE, 5, locations));

    // The log entry carries counts, not locations: the leader answers those itself.
    assertThat(result).isEqualTo(Applied.NOTHING);
    RegisteredShuffle shuffle = state.view().shuffles().get(SHUFFLE);
    assertThat(shuffle.numPartitions()).isEqualTo(5);
    assertThat(shuffle.slotsPerWorker()).containsEntry(W1, 3).containsEntry(W2, 2);
    assertThat(state.hasShuffle(SHUFFLE)).isTrue();
    assertThat(state.hasShuffle(new ShuffleId(APP, 1))).isFalse();
  }

  @Test
  void aShufflesSlotCountsShareTheRegisteredWorkersIdsNotTheLogEntrysCopies() {
    apply(register(W1, 1));
    apply(register(W2, 1));
    apply(new RegisterApp(APP));
    // As a log entry is parsed: ids equal to the registered ones, but other objects.
    WorkerId w1 = new WorkerId(W1.value());
    WorkerId w2 = new WorkerId(W2.value());

    apply(new AllocateSlots(SHUFFLE, 4, locations(4, w1, w2)));
    apply(new AllocateSlots(new ShuffleId(APP, 1), 2, locations(2, new WorkerId(W2.value()))));

    for (RegisteredShuffle shuffle : state.view().shuffles().values()) {
      for (WorkerId id : shuffle.slotsPerWorker().keySet()) {
        assertThat(id).isSameAs(state.worker(id).orElseThrow().id());
      }
    }
    assertThat(state.view().shuffles().get(SHUFFLE).slotsPerWorker())
        .containsEntry(W1, 2)
        .containsEntry(W2, 2);
  }

  @Test
  void allocateSlotsForExistingShuffleAddsSlots() {
    apply(register(W1, 1));
    apply(new RegisterApp(APP));
    apply(new AllocateSlots(SHUFFLE, 4, locations(4, W1)));

    apply(new AllocateSlots(SHUFFLE, 4, locations(2, W1)));

    RegisteredShuffle shuffle = state.view().shuffles().get(SHUFFLE);
    assertThat(shuffle.slotsPerWorker()).containsEntry(W1, 6);
    assertThat(shuffle.totalSlots()).isEqualTo(6);
    assertThat(state.view().slotsPerWorker()).containsEntry(W1, 6);
  }

  @Test
  void aRetriedAllocationReplacesItsOwnSlotsInsteadOfAddingThem() {
    apply(register(W1, 1));
    apply(register(W2, 1));
    apply(new RegisterApp(APP));
    apply(new AllocateSlots(SHUFFLE, 4, locations(4, W1), "request-a"));
    // The leader died before answering; the retry reached a new leader, which placed elsewhere.
    apply(new AllocateSlots(SHUFFLE, 4, locations(4, W2), "request-a"));

    RegisteredShuffle shuffle = state.view().shuffles().get(SHUFFLE);
    assertThat(shuffle.slotsPerWorker()).containsOnly(Map.entry(W2, 4));
    // Another request adds, as does one without an id.
    apply(new AllocateSlots(SHUFFLE, 4, locations(2, W1), "request-b"));
    apply(new AllocateSlots(SHUFFLE, 4, locations(1, W1)));
    assertThat(state.view().shuffles().get(SHUFFLE).slotsPerWorker())
        .containsEntry(W1, 3)
        .containsEntry(W2, 4);

    // Remembered through a snapshot: a retry applied after a restore replaces as well.
    MasterState restored =
        new MasterState(SnapshotCodec.decode(SnapshotCodec.encode(state.view(), 1, 9)));
    assertThat(restored.view()).isEqualTo(state.view());
    restored.apply(
        new StampedCommand(2_000, new AllocateSlots(SHUFFLE, 4, locations(2, W2), "request-b")));
    assertThat(restored.view().shuffles().get(SHUFFLE).slotsPerWorker())
        .containsEntry(W1, 1)
        .containsEntry(W2, 6);
  }

  @Test
  void onlyTheLatestAllocationsOfAShuffleAreRemembered() {
    apply(register(W1, 1));
    apply(new RegisterApp(APP));
    for (int i = 0; i <= RegisteredShuffle.RECENT_ALLOCATIONS; i++) {
      apply(new AllocateSlots(SHUFFLE, 1, locations(1, W1), "request-" + i));
    }
    RegisteredShuffle shuffle = state.view().shuffles().get(SHUFFLE);
    assertThat(shuffle.recentAllocations()).hasSize(RegisteredShuffle.RECENT_ALLOCATIONS);
    assertThat(shuffle.recentAllocations().get(0).requestId()).isEqualTo("request-1");
    // The forgotten first request, retried, now adds.
    apply(new AllocateSlots(SHUFFLE, 1, locations(1, W1), "request-0"));
    assertThat(state.view().shuffles().get(SHUFFLE).totalSlots())
        .isEqualTo(RegisteredShuffle.RECENT_ALLOCATIONS + 2);
  }

  @Test
  void allocateSlotsForUnknownAppOrWorkerIsRejectedWithoutChange() {
    apply(register(W1, 1));
    MasterStateView before = state.view();

    ApplyResult noApp = apply(new AllocateSlots(SHUFFLE, 2, locations(2, W1)));
    assertThat(noApp)
        .isInstanceOfSatisfying(
            Rejected.class,
            r -> {
              assertThat(r.code()).isEqualTo(ErrorCode.UNKNOWN_APP);
              assertThat(r.message()).contains("app-1");
            });

    apply(new RegisterApp(APP));
    ApplyResult noWorker = apply(new AllocateSlots(SHUFFLE, 2, locations(2, W2)));
    assertThat(noWorker)
        .isInstanceOfSatisfying(
            Rejected.class,
            r -> {
              assertThat(r.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
              assertThat(r.message()).contains("w2");
            });
    assertThat(state.hasShuffle(SHUFFLE)).isFalse();
    assertThat(state.view().workers()).isEqualTo(before.workers());
  }

  @Test
  void removeAppDropsItsShufflesOnly() {
    AppId other = new AppId("app-2");
    apply(register(W1, 1));
    apply(new RegisterApp(APP));
    apply(new RegisterApp(other));
    apply(new AllocateSlots(SHUFFLE, 1, locations(1, W1)));
    apply(new AllocateSlots(new ShuffleId(APP, 7), 1, locations(1, W1)));
    apply(new AllocateSlots(new ShuffleId(other, 0), 1, locations(1, W1)));

    apply(new RemoveApp(APP, "test"));

    assertThat(state.appIds()).containsExactly(other);
    assertThat(state.view().shuffles().keySet()).containsExactly(new ShuffleId(other, 0));
    // What heartbeats ask (a hashed index beside the ordered map) says the same.
    assertThat(state.hasShuffle(SHUFFLE)).isFalse();
    assertThat(state.hasShuffle(new ShuffleId(APP, 7))).isFalse();
    assertThat(state.hasShuffle(new ShuffleId(other, 0))).isTrue();
    // Removing again is a no-op.
    assertThat(apply(new RemoveApp(APP, "again"))).isEqualTo(Applied.NOTHING);
  }

  @Test
  void unregisterShuffleRemovesItAndIsIdempotent() {
    apply(register(W1, 1));
    apply(new RegisterApp(APP));
    apply(new AllocateSlots(SHUFFLE, 1, locations(1, W1)));

    apply(new UnregisterShuffle(SHUFFLE));
    apply(new UnregisterShuffle(SHUFFLE));

    assertThat(state.hasShuffle(SHUFFLE)).isFalse();
    assertThat(state.hasApp(APP)).isTrue();
  }

  @Test
  void sameCommandsGiveSameStateOnEveryReplica() {
    List<StampedCommand> log =
        List.of(
            new StampedCommand(10, register(W2, 2)),
            new StampedCommand(11, register(W1, 1)),
            new StampedCommand(12, new RegisterApp(APP)),
            new StampedCommand(13, new AllocateSlots(SHUFFLE, 3, locations(3, W1, W2))),
            new StampedCommand(14, new WorkerLost(W2, "test")));
    MasterState first = new MasterState();
    MasterState second = new MasterState();
    log.forEach(first::apply);
    log.forEach(second::apply);

    assertThat(first.view()).isEqualTo(second.view());
    assertThat(SnapshotCodec.encode(first.view(), 1, 5).toByteArray())
        .isEqualTo(SnapshotCodec.encode(second.view(), 1, 5).toByteArray());
  }

  @Test
  void snapshotRoundTripRestoresEqualState() throws Exception {
    apply(register(W1, 2));
    apply(register(W2, 1));
    apply(new WorkerLost(W2, "test"));
    apply(new RegisterApp(APP));
    apply(new RegisterApp(new AppId("app-2")));
    apply(new AllocateSlots(SHUFFLE, 4, locations(4, W1, W2)));
    apply(new AllocateSlots(new ShuffleId(APP, 1), 2, locations(2, W1)));

    MasterSnapshot snapshot = SnapshotCodec.encode(state.view(), 3, 42);
    MasterSnapshot reread = MasterSnapshot.parseFrom(snapshot.toByteArray());
    MasterState restored = new MasterState(SnapshotCodec.decode(reread));

    assertThat(reread.getTerm()).isEqualTo(3);
    assertThat(reread.getIndex()).isEqualTo(42);
    assertThat(restored.view()).isEqualTo(state.view());
    assertThat(restored.worker(W2).orElseThrow().alive()).isFalse();
    assertThat(restored.worker(W1).orElseThrow().registeredAtMs()).isEqualTo(1_000);
    assertThat(restored.hasShuffle(SHUFFLE)).isTrue();
    assertThat(restored.hasShuffle(new ShuffleId(APP, 1))).isTrue();
    assertThat(restored.hasShuffle(new ShuffleId(APP, 2))).isFalse();
    // Loading a snapshot over a state replaces what it held, the index included.
    state.replaceWith(new MasterState().view());
    assertThat(state.hasShuffle(SHUFFLE)).isFalse();
  }

  @Test
  void emptyStateSnapshotRoundTrips() {
    MasterStateView view = SnapshotCodec.decode(SnapshotCodec.encode(MasterStateView.EMPTY, 0, 0));
    assertThat(view).isEqualTo(MasterStateView.EMPTY);
  }
}
