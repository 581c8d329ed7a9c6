package io.faro.master.server;

import static io.faro.master.testing.Requests.appHeartbeat;
import static io.faro.master.testing.Requests.heartbeat;
import static io.faro.master.testing.Requests.registerApp;
import static io.faro.master.testing.Requests.registerWorker;
import static io.faro.master.testing.Requests.requestSlots;
import static io.faro.master.testing.Requests.shuffle;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.testing.Eventually;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.WorkerHeartbeatResponse;
import io.faro.proto.WorkerStatusP;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Workers and apps whose heartbeats stop are declared lost and removed, on short timeouts. */
class MasterLivenessTest {
  @TempDir Path dir;

  @Test
  void silentWorkersAreLostAndSilentAppsRemoved() {
    try (MasterFixture master =
        MasterFixture.start(
            MasterFixture.conf(dir)
                .with(MasterServerOptions.WORKER_TIMEOUT, "600ms")
                .with(MasterServerOptions.APP_TIMEOUT, "600ms"))) {
      master.call(registerWorker("w1", 1), RegisterWorkerResponse.class);
      master.call(registerWorker("w2", 1), RegisterWorkerResponse.class);
      master.call(registerApp("app-live"));
      master.call(registerApp("app-gone"));
      master.call(requestSlots(shuffle("app-live", 0), 4), RequestSlotsResponse.class);
      master.call(requestSlots(shuffle("app-gone", 0), 4), RequestSlotsResponse.class);

      // w2 and app-live keep beating; w1 and app-gone fall silent.
      Eventually.await(
          "w1 lost and app-gone removed",
          Duration.ofSeconds(10),
          () -> {
            master.call(heartbeat("w2", List.of()), WorkerHeartbeatResponse.class);
            master.call(appHeartbeat("app-live"));
            ClusterStatusResponse status = master.status();
            return !worker(status, "w1").getAlive() && !status.getAppsList().contains("app-gone");
          });

      ClusterStatusResponse status = master.status();
      assertThat(worker(status, "w2").getAlive()).isTrue();
      assertThat(status.getAppsList()).containsExactly("app-live");
      assertThat(status.getShufflesList()).containsExactly(shuffle("app-live", 0));

      List<PartitionLocationP> placed =
          master
              .call(requestSlots(shuffle("app-live", 1), 10), RequestSlotsResponse.class)
              .getLocationsList();
      assertThat(placed).extracting(PartitionLocationP::getWorkerId).containsOnly("w2");
      assertThat(master.callFails(requestSlots(shuffle("app-gone", 1), 1)).code())
          .isEqualTo(ErrorCode.UNKNOWN_APP);

      WorkerHeartbeatResponse lostAnswer =
          master.call(
              heartbeat("w1", List.of(shuffle("app-gone", 0))), WorkerHeartbeatResponse.class);
      assertThat(lostAnswer.getRegisterAgain()).isTrue();
      assertThat(lostAnswer.getExpiredShufflesList()).containsExactly(shuffle("app-gone", 0));

      master.call(registerWorker("w1", 1), RegisterWorkerResponse.class);
      assertThat(worker(master.status(), "w1").getAlive()).isTrue();
    }
  }

  private static WorkerStatusP worker(ClusterStatusResponse status, String id) {
    return status.getWorkersList().stream()
        .filter(w -> w.getWorkerId().equals(id))
        .findFirst()
        .orElseThrow();
  }
}
