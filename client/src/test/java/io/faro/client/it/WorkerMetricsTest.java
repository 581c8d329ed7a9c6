package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ReadRange;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.client.testing.Scrape;
import io.faro.common.batch.Batch;
import io.faro.common.id.AppId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.worker.server.WorkerServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shuffle through two real workers, then a scrape of each worker's {@code /metrics}: the bytes
 * pushed, committed, written to disk and fetched agree with each other, and the requests are
 * counted and timed on the port they came to.
 */
class WorkerMetricsTest {
  @TempDir Path dir;

  @Test
  void whatAShuffleDidIsWhatTheWorkersCount() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2)) {
      ClientSettings settings =
          ClientSettings.from(cluster.clientConf().with("faro.client.push.batch.size", "4k"));
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("metrics"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        ShuffleWorkload workload = new ShuffleWorkload(3, 8, 2000, 11L);
        for (int map = 0; map < workload.maps; map++) {
          try (MapPusher pusher =
              client.newMapPusher(lifecycle.endpoint(), shuffle, map, 0, 3, 8)) {
            workload.writeMap(pusher, map, 0);
            pusher.finish();
            client.mapperEnd(lifecycle.endpoint(), shuffle, map, 0, 3, pusher.batchCounts());
          }
        }
        int[][] seen = new int[3][2000];
        for (int p = 0; p < 8; p++) {
          try (PartitionReader reader =
              client.newReader(
                  lifecycle.endpoint(), shuffle, 3, new ReadRange(p, p + 1, 0, 3), 0)) {
            for (Batch b; (b = reader.next()) != null; ) {
              workload.countBatch(b, p, seen);
            }
          }
        }
        ShuffleWorkload.assertEveryRecordOnce(seen);

        List<Scrape> scrapes = new ArrayList<>();
        for (WorkerServer worker : cluster.workers()) {
          assertThat(worker.httpPort()).isPositive();
          scrapes.add(Scrape.of(worker.httpPort()));
        }
        double pushed = 0;
        double committed = 0;
        double fetched = 0;
        double written = 0;
        double pushRequests = 0;
        for (Scrape s : scrapes) {
          pushed += s.value("faro_worker_pushed_bytes_total");
          committed += s.value("faro_worker_committed_bytes_total");
          fetched += s.value("faro_worker_fetched_bytes_total");
          written += s.sum("faro_worker_disk_written_bytes_total", "");
          double requests = s.value("faro_worker_requests_total{port=\"push\",type=\"push\"}");
          double failures =
              s.value("faro_worker_request_failures_total{port=\"push\",type=\"push\"}");
          assertThat(s.value("faro_worker_request_seconds_count{port=\"push\",type=\"push\"}"))
              .isEqualTo(requests - failures);
          pushRequests += requests;
          assertThat(s.value("faro_worker_requests_total{port=\"rpc\",type=\"commit_files\"}"))
              .isGreaterThanOrEqualTo(1);
          assertThat(s.value("faro_worker_connections{port=\"fetch\"}")).isGreaterThan(0);
          assertThat(s.sum("faro_worker_disk_state", "state=\"healthy\"")).isEqualTo(1);
          assertThat(s.value("faro_worker_shuffles")).isEqualTo(1);
          assertThat(s.value("faro_worker_apps")).isEqualTo(1);
          assertThat(s.value("faro_worker_memory_budget_used_bytes")).isZero();
          assertThat(s.has("jvm_memory_used_bytes{area=\"heap\"}")).isTrue();
        }
        assertThat(pushed).isPositive();
        assertThat(pushRequests).isPositive();
        // Without replicas, every byte taken is committed, written once and read once.
        assertThat(committed).isEqualTo(pushed);
        assertThat(fetched).isEqualTo(pushed);
        assertThat(written).isGreaterThanOrEqualTo(pushed);

        // The JSON API tells the same.
        double jsonWritten = 0;
        for (WorkerServer worker : cluster.workers()) {
          String disks = Scrape.get(worker.httpPort(), "/api/v1/disks").body();
          assertThat(Json.string(disks, "worker_id")).isEqualTo(worker.workerId().value());
          assertThat(Json.strings(disks, "state")).containsExactly("healthy");
          jsonWritten += Json.number(disks, "written_bytes");
          String shuffles =
              Scrape.get(worker.httpPort(), "/api/v1/shuffles", cluster.adminToken()).body();
          assertThat(Json.number(shuffles, "total_shuffles")).isEqualTo(1);
          assertThat(Json.string(shuffles, "id")).isEqualTo("metrics/0");
          assertThat(Json.number(shuffles, "locations")).isPositive();
          assertThat(Json.number(shuffles, "open_locations")).isZero();
          assertThat(
                  Json.strings(
                      Scrape.get(
                              worker.httpPort(),
                              "/api/v1/shuffles?after=metrics/0",
                              cluster.adminToken())
                          .body(),
                      "id"))
              .isEmpty();
          String memory = Scrape.get(worker.httpPort(), "/api/v1/memory").body();
          assertThat(Json.number(memory, "memory_budget_used_bytes")).isZero();
          assertThat(Json.number(memory, "heap_max_bytes")).isPositive();
          assertThat(Scrape.get(worker.httpPort(), "/api/v1/nothing").statusCode()).isEqualTo(404);
          assertThat(
                  Scrape.get(worker.httpPort(), "/api/v1/shuffles?limit=x", cluster.adminToken())
                      .statusCode())
              .isEqualTo(400);
        }
        assertThat(jsonWritten).isEqualTo(written);
      }
    }
  }
}
