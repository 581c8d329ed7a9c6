package io.faro.master.server;

import static io.faro.master.testing.Requests.heartbeat;
import static io.faro.master.testing.Requests.registerApp;
import static io.faro.master.testing.Requests.registerWorker;
import static io.faro.master.testing.Requests.requestSlots;
import static io.faro.master.testing.Requests.shuffle;
import static io.faro.master.testing.Requests.unregisterShuffle;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.network.RemoteException;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.DiskStatusP;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.WorkerAdmissionP;
import io.faro.proto.WorkerHeartbeatResponse;
import io.faro.proto.WorkerStateP;
import io.faro.proto.WorkerStatusP;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One master on loopback, driven by the RPCs a worker and a lifecycle manager send. */
class MasterServerTest {
  @TempDir Path dir;
  private MasterFixture master;

  @BeforeEach
  void start() {
    master = MasterFixture.start(MasterFixture.conf(dir));
  }

  @AfterEach
  void stop() {
    master.close();
  }

  private void registerWorkers(int count, int disks) {
    for (int i = 1; i <= count; i++) {
      master.call(registerWorker("w" + i, disks), RegisterWorkerResponse.class);
      master.call(heartbeat("w" + i, List.of()), WorkerHeartbeatResponse.class);
    }
  }

  private static <K> Map<K, Long> countBy(
      List<PartitionLocationP> locations, Function<PartitionLocationP, K> key) {
    return locations.stream().collect(Collectors.groupingBy(key, Collectors.counting()));
  }

  @Test
  void placesEveryPartitionRoundRobinOverWorkersAndDisks() {
    registerWorkers(3, 2);
    master.call(registerApp("app-1"));

    List<PartitionLocationP> locations =
        master
            .call(requestSlots(shuffle("app-1", 0), 200), RequestSlotsResponse.class)
            .getLocationsList();

    assertThat(locations)
        .extracting(PartitionLocationP::getPartitionId)
        .containsExactlyInAnyOrderElementsOf(IntStream.range(0, 200).boxed().toList());
    assertThat(locations).allSatisfy(l -> assertThat(l.getEpoch()).isZero());
    assertThat(countBy(locations, PartitionLocationP::getWorkerId))
        .containsOnlyKeys("w1", "w2", "w3")
        .allSatisfy((worker, n) -> assertThat(n).isBetween(66L, 67L));
    assertThat(countBy(locations, l -> l.getWorkerId() + "/" + l.getDiskIndex()))
        .hasSize(6)
        .allSatisfy((disk, n) -> assertThat(n).isBetween(33L, 34L));

    ClusterStatusResponse status = master.status();
    assertThat(status.getLeaderId()).isEqualTo("m1");
    assertThat(status.getAppliedIndex()).isPositive();
    assertThat(status.getAppsList()).containsExactly("app-1");
    assertThat(status.getShufflesList()).containsExactly(shuffle("app-1", 0));
    assertThat(status.getWorkersList())
        .allSatisfy(
            w -> {
              assertThat(w.getAlive()).isTrue();
              assertThat(w.getLastHeartbeatMs()).isGreaterThanOrEqualTo(w.getRegisteredAtMs());
            });
    assertThat(status.getWorkersList().stream().mapToInt(WorkerStatusP::getAllocatedSlots).sum())
        .isEqualTo(200);
  }

  @Test
  void revivedPartitionsGetTheirEpochAndAddSlots() {
    registerWorkers(2, 1);
    master.call(registerApp("app-1"));
    master.call(requestSlots(shuffle("app-1", 0), 4), RequestSlotsResponse.class);

    RequestSlotsResponse revived =
        master.call(
            RequestSlotsRequest.newBuilder()
                .setShuffle(shuffle("app-1", 0))
                .setNumPartitions(4)
                .addPartitionIds(2)
                .setEpoch(1)
                .build(),
            RequestSlotsResponse.class);

    assertThat(revived.getLocationsList())
        .singleElement()
        .satisfies(
            l -> {
              assertThat(l.getPartitionId()).isEqualTo(2);
              assertThat(l.getEpoch()).isEqualTo(1);
            });
    assertThat(
            master.status().getWorkersList().stream()
                .mapToInt(WorkerStatusP::getAllocatedSlots)
                .sum())
        .isEqualTo(5);
  }

  @Test
  void heartbeatNamesShufflesTheMasterNoLongerHolds() {
    registerWorkers(1, 1);
    master.call(registerApp("app-1"));
    master.call(requestSlots(shuffle("app-1", 0), 2), RequestSlotsResponse.class);
    master.call(requestSlots(shuffle("app-1", 1), 2), RequestSlotsResponse.class);

    master.call(unregisterShuffle(shuffle("app-1", 0)));
    ShuffleKeyP neverKnown = shuffle("app-x", 5);
    WorkerHeartbeatResponse answer =
        master.call(
            heartbeat("w1", List.of(shuffle("app-1", 0), shuffle("app-1", 1), neverKnown)),
            WorkerHeartbeatResponse.class);

    assertThat(answer.getRegisterAgain()).isFalse();
    assertThat(answer.getExpiredShufflesList())
        .containsExactlyInAnyOrder(shuffle("app-1", 0), neverKnown);
    assertThat(master.status().getShufflesList()).containsExactly(shuffle("app-1", 1));
  }

  @Test
  void unknownAppGetsNoSlots() {
    registerWorkers(1, 1);

    RemoteException never = master.callFails(requestSlots(shuffle("app-9", 0), 1));
    assertThat(never.code()).isEqualTo(ErrorCode.UNKNOWN_APP);
    assertThat(never.retryable()).isFalse();
    assertThat(never).hasMessageContaining("app-9");

    master.call(registerApp("app-9"));
    master.call(requestSlots(shuffle("app-9", 0), 1), RequestSlotsResponse.class);
    master.call(UnregisterAppRequest.newBuilder().setAppId("app-9").build());

    assertThat(master.status().getShufflesList()).isEmpty();
    assertThat(master.callFails(requestSlots(shuffle("app-9", 1), 1)).code())
        .isEqualTo(ErrorCode.UNKNOWN_APP);
  }

  @Test
  void appHeartbeatRegistersAnUnknownApp() {
    master.call(Requests.appHeartbeat("app-late"));
    master.call(Requests.appHeartbeat("app-late"));

    assertThat(master.status().getAppsList()).containsExactly("app-late");
  }

  @Test
  void noAliveWorkerIsARetryableError() {
    master.call(registerApp("app-1"));

    RemoteException error = master.callFails(requestSlots(shuffle("app-1", 0), 3));

    assertThat(error.code()).isEqualTo(ErrorCode.NO_AVAILABLE_WORKERS);
    assertThat(error.retryable()).isTrue();
    assertThat(error).hasMessageContaining("no available workers");
  }

  @Test
  void disksReportedUnhealthyGetNoSlots() {
    registerWorkers(2, 2);
    master.call(heartbeat("w1", 0, DiskStatusP.BROKEN), WorkerHeartbeatResponse.class);
    master.call(heartbeat("w2", 1, DiskStatusP.FULL), WorkerHeartbeatResponse.class);
    master.call(registerApp("app-1"));

    List<PartitionLocationP> locations =
        master
            .call(requestSlots(shuffle("app-1", 0), 20), RequestSlotsResponse.class)
            .getLocationsList();

    assertThat(countBy(locations, l -> l.getWorkerId() + "/" + l.getDiskIndex()))
        .containsOnlyKeys("w1/1", "w2/0");
  }

  @Test
  void workersThatSayTheyStopOrDrainGetNoSlotsUntilTheyServeAgain() {
    registerWorkers(3, 1);
    master.call(registerApp("app-1"));
    master.call(
        heartbeat("w1", List.of()).toBuilder().setState(WorkerStateP.STOPPING).build(),
        WorkerHeartbeatResponse.class);
    master.call(
        heartbeat("w2", List.of()).toBuilder().setState(WorkerStateP.DRAINING).build(),
        WorkerHeartbeatResponse.class);

    assertThat(
            countBy(
                master
                    .call(requestSlots(shuffle("app-1", 0), 12), RequestSlotsResponse.class)
                    .getLocationsList(),
                PartitionLocationP::getWorkerId))
        .containsOnlyKeys("w3");
    assertThat(
            master.status().getWorkersList().stream()
                .collect(Collectors.toMap(WorkerStatusP::getWorkerId, WorkerStatusP::getState)))
        .containsEntry("w1", WorkerStateP.STOPPING)
        .containsEntry("w2", WorkerStateP.DRAINING)
        .containsEntry("w3", WorkerStateP.SERVING);

    // Restarted: it registers again, and serves before its first heartbeat says so.
    master.call(registerWorker("w1", 1), RegisterWorkerResponse.class);
    assertThat(
            countBy(
                master
                    .call(requestSlots(shuffle("app-1", 1), 12), RequestSlotsResponse.class)
                    .getLocationsList(),
                PartitionLocationP::getWorkerId))
        .containsOnlyKeys("w1", "w3");
  }

  @Test
  void aDecommissioningWorkerIsToldToDrainAndIsDecommissionedOnceItSaysItDrained() {
    registerWorkers(2, 1);
    WorkerHeartbeatResponse before =
        master.call(heartbeat("w1", List.of()), WorkerHeartbeatResponse.class);
    assertThat(before.getDecommission()).isFalse();

    master.call(
        SetWorkerAdmissionRequest.newBuilder()
            .setWorkerId("w1")
            .setAdmission(WorkerAdmissionP.ADMISSION_DECOMMISSIONING)
            .setReason("retiring the machine")
            .build());
    assertThat(
            master
                .call(heartbeat("w1", List.of()), WorkerHeartbeatResponse.class)
                .getDecommission())
        .isTrue();
    // Only the masters decommission a worker, once it drained.
    assertThat(
            master
                .callFails(
                    SetWorkerAdmissionRequest.newBuilder()
                        .setWorkerId("w2")
                        .setAdmission(WorkerAdmissionP.ADMISSION_DECOMMISSIONED)
                        .build())
                .code())
        .isEqualTo(ErrorCode.INVALID_REQUEST);

    WorkerHeartbeatResponse drained =
        master.call(
            heartbeat("w1", List.of()).toBuilder().setState(WorkerStateP.DRAINED).build(),
            WorkerHeartbeatResponse.class);

    assertThat(drained.getLeader()).isTrue();
    WorkerStatusP w1 =
        master.status().getWorkersList().stream()
            .filter(w -> w.getWorkerId().equals("w1"))
            .findFirst()
            .orElseThrow();
    assertThat(w1.getAdmission()).isEqualTo(WorkerAdmissionP.ADMISSION_DECOMMISSIONED);
    assertThat(w1.getState()).isEqualTo(WorkerStateP.DRAINED);
    // A drained worker that an operator includes again takes slots once it serves.
    master.call(
        SetWorkerAdmissionRequest.newBuilder()
            .setWorkerId("w1")
            .setAdmission(WorkerAdmissionP.ADMISSION_ACTIVE)
            .build());
    master.call(registerWorker("w1", 1), RegisterWorkerResponse.class);
    master.call(registerApp("app-1"));
    assertThat(
            countBy(
                master
                    .call(requestSlots(shuffle("app-1", 0), 4), RequestSlotsResponse.class)
                    .getLocationsList(),
                PartitionLocationP::getWorkerId))
        .containsOnlyKeys("w1", "w2");
  }

  @Test
  void unknownWorkerIsAskedToRegister() {
    WorkerHeartbeatResponse answer =
        master.call(heartbeat("stranger", List.of()), WorkerHeartbeatResponse.class);

    assertThat(answer.getRegisterAgain()).isTrue();
    assertThat(master.status().getWorkersList()).isEmpty();
  }

  @Test
  void malformedRequestsAreInvalid() {
    master.call(registerApp("app-1"));

    assertThat(master.callFails(requestSlots(shuffle("app-1", 0), 0)).code())
        .isEqualTo(ErrorCode.INVALID_REQUEST);
    RemoteException badPartition =
        master.callFails(
            RequestSlotsRequest.newBuilder()
                .setShuffle(shuffle("app-1", 0))
                .setNumPartitions(2)
                .addPartitionIds(2)
                .build());
    assertThat(badPartition.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(badPartition).hasMessageContaining("partition id 2");
    assertThat(master.callFails(registerWorker("", 1)).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
  }
}
