package io.faro.master.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.state.DiskSpec;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.WorkerAdmission;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The policy around round-robin placement: which workers a request gets, and the fallback. */
class PlacementPolicyTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app"), 0);

  private final Map<WorkerId, Map<Integer, DiskLoad>> loads = new HashMap<>();
  private final Map<WorkerId, WorkerState> states = new HashMap<>();
  private final PlacementPolicy policy =
      new PlacementPolicy(
          new RoundRobinPlacement(500),
          w -> loads.getOrDefault(w, Map.of()),
          w -> states.getOrDefault(w, WorkerState.SERVING),
          placed -> {});

  private static RegisteredWorker worker(String id) {
    return new RegisteredWorker(
        new WorkerId(id),
        new WorkerEndpoint("host-" + id, 1, 2, 3),
        List.of(
            new DiskSpec(0, "/d0", DiskTier.SSD, 1L << 40),
            new DiskSpec(1, "/d1", DiskTier.SSD, 1L << 40)),
        0,
        true);
  }

  private static PlacementRequest request(int partitions, boolean replicate) {
    return new PlacementRequest(
        SHUFFLE, IntStream.range(0, partitions).boxed().toList(), 0, replicate);
  }

  private static List<String> workersOf(List<PartitionLocation> locations) {
    return locations.stream()
        .flatMap(l -> l.copies().stream())
        .map(l -> l.worker().value())
        .distinct()
        .sorted()
        .toList();
  }

  @Test
  void onlyAdmittedWorkersTheRequestDoesNotExcludeGetSlots() {
    List<RegisteredWorker> alive =
        List.of(
            worker("w1"),
            worker("w2").withAdmission(WorkerAdmission.EXCLUDED, "suspect"),
            worker("w3").withAdmission(WorkerAdmission.DECOMMISSIONING, "upgrade"),
            worker("w4"),
            worker("w5"));

    List<PartitionLocation> placed =
        policy.place(request(40, false), alive, List.of("w4"), List.of());

    assertThat(placed).hasSize(40);
    assertThat(workersOf(placed)).containsExactly("w1", "w5");
  }

  @Test
  void workersOnTheirWayOutGetNoSlots() {
    List<RegisteredWorker> alive = List.of(worker("w1"), worker("w2"), worker("w3"), worker("w4"));
    states.put(new WorkerId("w1"), WorkerState.STOPPING);
    states.put(new WorkerId("w2"), WorkerState.DRAINING);
    states.put(new WorkerId("w3"), WorkerState.DRAINED);

    assertThat(workersOf(policy.place(request(20, false), alive, List.of(), List.of())))
        .containsExactly("w4");
  }

  @Test
  void avoidedWorkersGetSlotsOnlyWhenTheOthersCannotTakeTheRequest() {
    List<RegisteredWorker> alive = List.of(worker("w1"), worker("w2"), worker("w3"));

    assertThat(workersOf(policy.place(request(10, false), alive, List.of(), List.of("w1"))))
        .containsExactly("w2", "w3");
    assertThat(workersOf(policy.place(request(10, true), alive, List.of(), List.of("w1", "w2"))))
        .as("replicas need two workers: the avoided ones are better than none")
        .containsExactly("w1", "w2", "w3");
    assertThat(
            workersOf(
                policy.place(request(10, false), alive, List.of(), List.of("w1", "w2", "w3"))))
        .as("every worker avoided")
        .containsExactly("w1", "w2", "w3");
  }

  @Test
  void candidatesCarryTheirDisksLatestLoads() {
    loads.put(new WorkerId("w1"), Map.of(0, new DiskLoad(0, 0, DiskStatus.FULL, 3, 0, 0, 0)));
    loads.put(
        new WorkerId("w2"),
        Map.of(
            0,
            new DiskLoad(0, 0, DiskStatus.BROKEN, 0, 0, 0, 0),
            1,
            new DiskLoad(1, 0, DiskStatus.BROKEN, 0, 0, 0, 0)));

    List<PartitionLocation> placed =
        policy.place(request(10, false), List.of(worker("w1"), worker("w2")), List.of(), List.of());

    assertThat(placed)
        .allSatisfy(
            l -> {
              assertThat(l.worker().value()).isEqualTo("w1");
              assertThat(l.diskIndex()).as("disk 0 is full").isEqualTo(1);
            });
  }

  @Test
  void aPreferredWorkerWithoutAUsableDiskFallsBackToTheAvoidedOnes() {
    loads.put(
        new WorkerId("w2"),
        Map.of(
            0,
            new DiskLoad(0, 0, DiskStatus.BROKEN, 0, 0, 0, 0),
            1,
            new DiskLoad(1, 0, DiskStatus.FULL, 0, 0, 0, 0)));

    List<PartitionLocation> placed =
        policy.place(
            request(4, false), List.of(worker("w1"), worker("w2")), List.of(), List.of("w1"));

    assertThat(workersOf(placed)).containsExactly("w1");
  }

  @Test
  void noWorkerThatMayTakeTheRequestIsRefusedAsNoAvailableWorkers() {
    List<RegisteredWorker> alive =
        List.of(worker("w1").withAdmission(WorkerAdmission.EXCLUDED, "suspect"), worker("w2"));

    assertThatThrownBy(() -> policy.place(request(1, false), alive, List.of("w2"), List.of()))
        .isInstanceOfSatisfying(
            FaroException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.NO_AVAILABLE_WORKERS));
  }
}
