package io.faro.master.server;

import static io.faro.master.testing.Requests.heartbeat;
import static io.faro.master.testing.Requests.registerApp;
import static io.faro.master.testing.Requests.registerWorker;
import static io.faro.master.testing.Requests.requestSlots;
import static io.faro.master.testing.Requests.shuffle;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import io.faro.master.testing.MasterFixture;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.WorkerHeartbeatResponse;
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

/** The master's JSON API and metrics on its HTTP port, against a real master. */
class MasterApiTest {
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

  private HttpResponse<String> get(String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + master.server().httpPort() + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  private String ok(String path) throws Exception {
    HttpResponse<String> response = get(path);
    assertThat(response.statusCode()).as(path).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    return response.body();
  }

  @Test
  void workersAppsShufflesAndMastersAnswerAsJson() throws Exception {
    for (int i = 1; i <= 2; i++) {
      master.call(registerWorker("w" + i, 2), RegisterWorkerResponse.class);
      master.call(heartbeat("w" + i, List.of()), WorkerHeartbeatResponse.class);
    }
    for (String app : List.of("app-a", "app-b", "app-c")) {
      master.call(registerApp(app));
    }
    master.call(requestSlots(shuffle("app-a", 0), 10), RequestSlotsResponse.class);
    master.call(requestSlots(shuffle("app-a", 1), 6), RequestSlotsResponse.class);
    master.call(requestSlots(shuffle("app-b", 0), 4), RequestSlotsResponse.class);

    String workers = ok("/api/v1/workers");
    assertThat(Json.string(workers, "served_by")).isEqualTo("m1");
    assertThat(Json.string(workers, "leader_id")).isEqualTo("m1");
    assertThat(Json.strings(workers, "id")).containsExactly("w1", "w2");
    assertThat(Json.numbers(workers, "allocated_slots").stream().mapToLong(n -> n).sum())
        .isEqualTo(20);
    assertThat(Json.strings(workers, "admission")).containsOnly("active");
    assertThat(Json.strings(workers, "tier")).hasSize(4);

    String firstPage = ok("/api/v1/apps?limit=2");
    assertThat(Json.number(firstPage, "total_apps")).isEqualTo(3);
    assertThat(Json.strings(firstPage, "id")).containsExactly("app-a", "app-b");
    assertThat(Json.numbers(firstPage, "shuffles")).containsExactly(2L, 1L);
    assertThat(Json.string(firstPage, "next_after")).isEqualTo("app-b");
    String secondPage = ok("/api/v1/apps?limit=2&after=app-b");
    assertThat(Json.strings(secondPage, "id")).containsExactly("app-c");
    assertThat(Json.string(secondPage, "next_after")).isEmpty();

    String shuffles = ok("/api/v1/shuffles?limit=2");
    assertThat(Json.number(shuffles, "total_shuffles")).isEqualTo(3);
    assertThat(Json.strings(shuffles, "id")).containsExactly("app-a/0", "app-a/1");
    assertThat(Json.numbers(shuffles, "partitions")).containsExactly(10L, 6L);
    assertThat(Json.string(shuffles, "next_after")).isEqualTo("app-a/1");
    assertThat(Json.strings(ok("/api/v1/shuffles?after=app-a/1"), "id")).containsExactly("app-b/0");

    String masters = ok("/api/v1/masters");
    assertThat(Json.string(masters, "role")).isEqualTo("leader");
    assertThat(masters).contains("\"peers\"");

    HttpResponse<String> badLimit = get("/api/v1/apps?limit=0");
    assertThat(badLimit.statusCode()).isEqualTo(400);
    assertThat(badLimit.body()).contains("limit must be a number from 1 to 10000");
    HttpResponse<String> unknown = get("/api/v1/nothing");
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(unknown.body()).contains("/api/v1/workers").contains("/metrics");

    String metrics = get("/metrics").body();
    assertThat(metrics)
        .contains("faro_master_workers{state=\"active\"} 2.0")
        .contains("faro_master_workers{state=\"lost\"} 0.0")
        .contains("faro_master_apps 3.0")
        .contains("faro_master_shuffles 3.0")
        .contains("faro_master_slots_placed_total 20.0")
        .contains("faro_master_request_seconds_count{port=\"rpc\",type=\"request_slots\"} 3")
        .contains("faro_master_requests_total{port=\"rpc\",type=\"register_app\"} 3.0");
  }
}
