package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.testing.Eventually;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.AdmissionRulesResponse;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.SetAdmissionRulesRequest;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerHeartbeatRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quotas: a new shuffle that would take its user or queue over a limit is refused with
 * QUOTA_EXCEEDED naming the quota; a shuffle already placed still gets slots (later pages,
 * revives); bytes are what the workers' heartbeats say they hold; usage is in /api/v1/quotas.
 */
class QuotaTest {
  @TempDir Path dir;
  private MasterFixture master;

  @BeforeEach
  void start() {
    master = MasterFixture.start(MasterFixture.conf(dir));
    master.call(Requests.registerWorker("w1", 1), RegisterWorkerResponse.class);
    master.call(Requests.registerApp("ann-1", "ann", "etl", "report"));
    master.call(Requests.registerApp("ann-2", "ann", "etl", "load"));
    master.call(Requests.registerApp("bob-1", "bob", "etl", "report"));
  }

  @AfterEach
  void stop() {
    master.close();
  }

  private void rules(String text) {
    master.call(
        SetAdmissionRulesRequest.newBuilder().setRules(text).setReason("test").build(),
        AdmissionRulesResponse.class);
  }

  private RequestSlotsResponse slots(ShuffleKeyP shuffle, int partitions) {
    return master.call(Requests.requestSlots(shuffle, partitions), RequestSlotsResponse.class);
  }

  private FaroException refused(ShuffleKeyP shuffle, int partitions) {
    Throwable e = catchThrowable(() -> slots(shuffle, partitions));
    assertThat(e).as("refused").isInstanceOf(FaroException.class);
    assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.QUOTA_EXCEEDED);
    return (FaroException) e;
  }

  @Test
  void aNewShuffleOverAUsersShuffleOrPartitionQuotaIsRefusedAndAPlacedOneNever() {
    rules("limit user=* shuffles=2 partitions=10\n");
    slots(Requests.shuffle("ann-1", 0), 4);
    slots(Requests.shuffle("ann-2", 0), 4);

    // Two shuffles over two apps of ann: a third is refused; bob is counted on his own.
    assertThat(refused(Requests.shuffle("ann-1", 1), 1))
        .hasMessageContaining("user ann is at its quota 'limit user=* shuffles=2 partitions=10'")
        .hasMessageContaining("(admin: test)")
        .hasMessageContaining("2 shuffles held, at most 2");
    slots(Requests.shuffle("bob-1", 0), 4);
    // A shuffle already placed gets more slots (a page, a revive) whatever the quota says.
    assertThat(
            master
                .call(
                    RequestSlotsRequest.newBuilder()
                        .setShuffle(Requests.shuffle("ann-1", 0))
                        .setNumPartitions(4)
                        .addPartitionIds(3)
                        .setEpoch(1)
                        .build(),
                    RequestSlotsResponse.class)
                .getLocationsList())
        .hasSize(1);

    // A later generation of a shuffle (a stage re-run) continues one already let in.
    assertThat(
            master
                .call(
                    Requests.requestSlots(Requests.shuffle("ann-1", 5), 1).toBuilder()
                        .setContinuesShuffle(true)
                        .build(),
                    RequestSlotsResponse.class)
                .getLocationsList())
        .hasSize(1);
    master.call(Requests.unregisterShuffle(Requests.shuffle("ann-1", 5)));

    master.call(Requests.unregisterShuffle(Requests.shuffle("ann-2", 0)));
    // One shuffle of 4 partitions held: 7 more would be 11.
    assertThat(refused(Requests.shuffle("ann-1", 1), 7))
        .hasMessageContaining("4 partitions held and 7 asked, at most 10");
    slots(Requests.shuffle("ann-1", 1), 6);
  }

  @Test
  void bytesAreWhatTheWorkersSayTheyHoldAndUsageIsInTheJsonApi() throws Exception {
    rules("limit queue=etl bytes=1m\n");
    slots(Requests.shuffle("ann-1", 0), 2);
    slots(Requests.shuffle("bob-1", 0), 2);
    master.call(
        WorkerHeartbeatRequest.newBuilder(Requests.heartbeat("w1", List.of()))
            .addShuffles(Requests.shuffle("ann-1", 0))
            .addShuffleBytes(700 << 10)
            .addShuffles(Requests.shuffle("bob-1", 0))
            .addShuffleBytes(400 << 10)
            .build(),
        io.faro.proto.WorkerHeartbeatResponse.class);

    // 1.1 MiB held by the queue's two users together.
    assertThat(refused(Requests.shuffle("bob-1", 1), 2))
        .hasMessageContaining("queue etl is at its quota 'limit queue=etl bytes=1m'")
        .hasMessageContaining("1126400 bytes held on the workers, at most 1048576");

    String json =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:" + master.server().httpPort() + "/api/v1/quotas"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(json)
        .contains("\"quota\": \"limit queue=etl bytes=1m\"")
        .contains("\"queue\": \"etl\"")
        .contains("\"bytes\": 1126400")
        .contains("\"shuffles\": 2")
        .contains("\"use\": 1.074");
    assertThat(master.server().metrics().text())
        .containsPattern("(?m)^faro_master_quota_groups_at_limit 1(\\.0)?$")
        .containsPattern("(?m)^faro_master_shuffles_refused_quota(_total)? 1(\\.0)?$");

    // The worker lets go of bob's bytes: room again.
    master.call(
        WorkerHeartbeatRequest.newBuilder(Requests.heartbeat("w1", List.of()))
            .addShuffles(Requests.shuffle("ann-1", 0))
            .addShuffleBytes(700 << 10)
            .addShuffles(Requests.shuffle("bob-1", 0))
            .addShuffleBytes(0)
            .build(),
        io.faro.proto.WorkerHeartbeatResponse.class);
    Eventually.await(
        "room under the quota",
        Duration.ofSeconds(5),
        () -> catchThrowable(() -> slots(Requests.shuffle("bob-1", 1), 2)) == null);
  }
}
