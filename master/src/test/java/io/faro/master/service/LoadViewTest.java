package io.faro.master.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.placement.DiskLoad;
import io.faro.master.placement.DiskStatus;
import io.faro.master.placement.WorkerReport;
import io.faro.master.placement.WorkerState;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LoadViewTest {
  private static final WorkerId KNOWN = new WorkerId("known");
  private static final AppId APP = new AppId("app");

  @Test
  void aFollowerForgetsHeartbeatsOfIdsItsStateNeverHeldOnceTheyAreOld() {
    LoadView loads = new LoadView();
    loads.workerHeartbeat(KNOWN, 1_000, List.of(), WorkerReport.UNKNOWN);
    loads.appHeartbeat(APP, 1_000);
    for (int i = 0; i < 1_000; i++) {
      loads.workerHeartbeat(new WorkerId("scanner-" + i), 1_000, List.of(), WorkerReport.UNKNOWN);
      loads.appHeartbeat(new AppId("fake-" + i), 1_000);
    }
    loads.workerHeartbeat(new WorkerId("registering"), 9_500, List.of(), WorkerReport.UNKNOWN);

    loads.pruneUnknown(Set.of(KNOWN), Set.of(APP), 10_000, 5_000);

    // Known members stay however old; a fresh unknown one (its registration not applied yet) too.
    assertThat(loads.workerHeartbeats()).containsOnlyKeys(KNOWN, new WorkerId("registering"));
    assertThat(loads.size()).isEqualTo(3);
    assertThat(loads.appLastHeartbeat(APP, 20_000)).isEqualTo(1_000);
  }

  @Test
  void partitionsPlacedCountAsOpenUntilTheWorkersNextHeartbeat() {
    LoadView loads = new LoadView();
    DiskLoad disk0 = new DiskLoad(0, 1L << 30, DiskStatus.HEALTHY, 2, 1, 1, 0);
    DiskLoad disk1 = new DiskLoad(1, 1L << 30, DiskStatus.HEALTHY, 0, 1, 1, 0);
    loads.workerHeartbeat(KNOWN, 1_000, List.of(disk0, disk1), WorkerReport.UNKNOWN);
    WorkerEndpoint endpoint = new WorkerEndpoint("h", 1, 2, 3);
    PartitionLocation onDisk0 = new PartitionLocation(0, 0, Role.PRIMARY, KNOWN, endpoint, 0);

    loads.placed(
        List.of(
            onDisk0,
            new PartitionLocation(1, 0, Role.PRIMARY, KNOWN, endpoint, 0),
            new PartitionLocation(2, 0, Role.PRIMARY, KNOWN, endpoint, 0)));

    assertThat(loads.diskLoads(KNOWN).get(0).activePartitions()).isEqualTo(5);
    assertThat(loads.diskLoads(KNOWN).get(1)).isSameAs(disk1);
    // The next heartbeat reports what the worker holds, the placed partitions among them.
    loads.workerHeartbeat(KNOWN, 2_000, List.of(disk0, disk1), WorkerReport.UNKNOWN);
    assertThat(loads.diskLoads(KNOWN).get(0).activePartitions()).isEqualTo(2);
    // A made-up disk index neither counts nor sizes anything.
    loads.placed(List.of(new PartitionLocation(0, 0, Role.PRIMARY, KNOWN, endpoint, 1 << 30)));
    loads.workerHeartbeat(
        KNOWN,
        3_000,
        List.of(new DiskLoad(Integer.MAX_VALUE, 0, DiskStatus.HEALTHY, 0, 0, 0, 0)),
        WorkerReport.UNKNOWN);
    assertThat(loads.diskLoads(KNOWN)).hasSize(1);
  }

  @Test
  void thePartitionSizeIsLearnedPerWorker() {
    LoadView loads = new LoadView();
    loads.workerHeartbeat(
        new WorkerId("a"), 1_000, List.of(), new WorkerReport(WorkerState.SERVING, 0, 4, 400));
    loads.workerHeartbeat(
        new WorkerId("b"), 1_000, List.of(), new WorkerReport(WorkerState.SERVING, 0, 0, 0));
    loads.workerHeartbeat(
        new WorkerId("c"), 1_000, List.of(), new WorkerReport(WorkerState.SERVING, 0, 1, 7));
    assertThat(loads.recentPartitionSizes()).containsExactlyInAnyOrder(100L, 7L);
  }
}
