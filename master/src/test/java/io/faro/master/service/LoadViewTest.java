package io.faro.master.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.AppId;
import io.faro.common.id.WorkerId;
import io.faro.master.placement.WorkerReport;
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
}
