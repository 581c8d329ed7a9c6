package io.faro.master.server;

import static io.faro.master.testing.Requests.heartbeat;
import static io.faro.master.testing.Requests.registerApp;
import static io.faro.master.testing.Requests.registerWorker;
import static io.faro.master.testing.Requests.requestSlots;
import static io.faro.master.testing.Requests.shuffle;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.network.RemoteException;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.EmptyResponse;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import io.faro.proto.WorkerStatusP;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests that once took a master down or made its leader step down: each is now refused (or
 * served) before anything proportional to it is allocated, and the master goes on leading in the
 * same term.
 */
class MasterLimitsTest {
  @TempDir Path dir;
  private MasterFixture master;

  @BeforeEach
  void start() {
    master = MasterFixture.start(MasterFixture.conf(dir).with(MasterServerOptions.MAX_APPS, "3"));
    for (int i = 1; i <= 3; i++) {
      master.call(registerWorker("w" + i, 2), RegisterWorkerResponse.class);
      master.call(heartbeat("w" + i, List.of()), WorkerHeartbeatResponse.class);
    }
  }

  @AfterEach
  void stop() {
    master.close();
  }

  private long term() {
    return master
        .call(MasterStatusRequest.getDefaultInstance(), MasterStatusResponse.class)
        .getTerm();
  }

  @Test
  void aSlotRequestForTwoBillionPartitionsIsRefusedNamingTheLimit() {
    master.call(registerApp("app-1"));
    long term = term();

    RemoteException refused =
        master.callFails(requestSlots(shuffle("app-1", 0), Integer.MAX_VALUE));

    assertThat(refused.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(refused)
        .hasMessageContaining("faro.master.max.partitions.per.shuffle")
        .hasMessageContaining(Integer.toString(Integer.MAX_VALUE));
    assertThat(
            master
                .callFails(
                    RequestSlotsRequest.newBuilder()
                        .setShuffle(shuffle("app-1", 0))
                        .setNumPartitions(2)
                        .addPartitionIds(0)
                        .addPartitionIds(1)
                        .addPartitionIds(0)
                        .build())
                .code())
        .isEqualTo(ErrorCode.INVALID_REQUEST);
    // Still serving, still leading in the same term.
    assertThat(
            master
                .call(requestSlots(shuffle("app-1", 0), 10), RequestSlotsResponse.class)
                .getLocationsCount())
        .isEqualTo(10);
    assertThat(term()).isEqualTo(term);
  }

  @Test
  void aMillionPartitionsFitOneLogEntry() {
    master.call(registerApp("app-1"));
    long term = term();

    RequestSlotsResponse placed =
        master.call(requestSlots(shuffle("app-1", 0), 1_000_000), RequestSlotsResponse.class);

    assertThat(placed.getLocationsCount()).isEqualTo(1_000_000);
    assertThat(placed.getLocations(999_999).getPartitionId()).isEqualTo(999_999);
    assertThat(
            master.status().getWorkersList().stream()
                .mapToInt(WorkerStatusP::getAllocatedSlots)
                .sum())
        .isEqualTo(1_000_000);
    assertThat(term()).isEqualTo(term);
  }

  @Test
  void appsBeyondTheLimitAreRefusedUntilOneEnds() {
    for (int i = 1; i <= 3; i++) {
      master.call(registerApp("app-" + i));
    }

    RemoteException refused = master.callFails(registerApp("app-4"));

    assertThat(refused.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(refused).hasMessageContaining("faro.master.max.apps");
    master.call(registerApp("app-2")); // a registered app registers again
    master.call(UnregisterAppRequest.newBuilder().setAppId("app-1").build(), EmptyResponse.class);
    master.call(registerApp("app-4"));
    assertThat(master.status().getAppsList()).containsExactlyInAnyOrder("app-2", "app-3", "app-4");
  }

  @Test
  void longAndControlCharacterIdsAreRefusedWithABoundedMessage() {
    String huge = "a".repeat(20_000);

    RemoteException longApp = master.callFails(registerApp(huge));
    RemoteException forged =
        master.callFails(registerApp("app-1\n2026-11-24 00:00:00.000 INFO forged line"));
    RemoteException longWorker = master.callFails(registerWorker("w".repeat(5_000), 1));

    assertThat(longApp.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(longApp).hasMessageContaining("at most 200");
    assertThat(longApp.getMessage()).hasSizeLessThan(400);
    assertThat(forged.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(forged.getMessage()).doesNotContain("\n").contains("app-1?2026");
    assertThat(longWorker.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(longWorker.getMessage()).hasSizeLessThan(400);
    assertThat(master.status().getAppsList()).isEmpty();
  }

  @Test
  void clusterStatusListsAppsAndShufflesOnePageAtATime() {
    for (int i = 1; i <= 3; i++) {
      master.call(registerApp("app-" + i));
      master.call(requestSlots(shuffle("app-" + i, 0), 2), RequestSlotsResponse.class);
    }

    ClusterStatusResponse first =
        master.call(
            ClusterStatusRequest.newBuilder().setPageSize(2).build(), ClusterStatusResponse.class);
    ClusterStatusResponse second =
        master.call(
            ClusterStatusRequest.newBuilder()
                .setPageSize(2)
                .setAppsAfter(first.getNextAppsAfter())
                .setShufflesAfter(first.getNextShufflesAfter())
                .build(),
            ClusterStatusResponse.class);

    assertThat(first.getAppsList()).containsExactly("app-1", "app-2");
    assertThat(first.getNextAppsAfter()).isEqualTo("app-2");
    assertThat(first.getShufflesList()).containsExactly(shuffle("app-1", 0), shuffle("app-2", 0));
    assertThat(first.getTotalApps()).isEqualTo(3);
    assertThat(first.getTotalShuffles()).isEqualTo(3);
    assertThat(first.getWorkersCount()).isEqualTo(3);
    assertThat(second.getAppsList()).containsExactly("app-3");
    assertThat(second.getNextAppsAfter()).isEmpty();
    assertThat(second.getShufflesList()).containsExactly(shuffle("app-3", 0));
    assertThat(second.hasNextShufflesAfter()).isFalse();
    assertThat(
            master
                .callFails(
                    ClusterStatusRequest.newBuilder().setAppsAfter("x".repeat(5_000)).build())
                .code())
        .isEqualTo(ErrorCode.INVALID_REQUEST);
  }
}
