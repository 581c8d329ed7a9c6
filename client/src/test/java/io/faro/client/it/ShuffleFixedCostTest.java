package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientOptions;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.client.testing.Scrape;
import io.faro.common.batch.Batch;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.worker.server.WorkerServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a shuffle costs beyond its data, against a real master and real workers, counted by their
 * own {@code /metrics}: a shuffle is placed when the driver registers it, before any map asks; a
 * commit asks only the workers that hold data, so a shuffle whose maps wrote nothing asks none;
 * empty partitions read as empty, never as lost; and the driver times every phase.
 */
class ShuffleFixedCostTest {
  private static final int MAPS = 3;
  private static final int PARTITIONS = 8;

  @TempDir Path dir;

  @Test
  void aShuffleIsPlacedAtRegistrationAndOnlyWorkersWithDataAreAskedToCommit() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2)) {
      ClientOptions.Settings settings = ClientOptions.Settings.from(cluster.clientConf());
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("fixed-cost"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);

        // Placed and reserved on both workers with no map task asking.
        lifecycle.registerShuffle(0, MAPS, PARTITIONS);
        waitUntilBothWorkersHoldAShuffle(cluster);
        assertThat(slotRequests(cluster)).isEqualTo(1);

        // Only map 1 writes, only to partition 5: one worker holds data.
        ShuffleId shuffle = new ShuffleId(lifecycle.app(), 0);
        byte[] record = "the only record".getBytes(StandardCharsets.UTF_8);
        for (int map = 0; map < MAPS; map++) {
          try (MapPusher pusher =
              client.newMapPusher(lifecycle.endpoint(), shuffle, map, 0, MAPS, PARTITIONS)) {
            if (map == 1) {
              pusher.write(5, record, 0, record.length);
              pusher.cut(5);
            }
            pusher.finish();
            client.mapperEnd(lifecycle.endpoint(), shuffle, map, 0, MAPS, pusher.batchCounts());
          }
        }
        // The maps found the registration's placement: no second slot request.
        assertThat(slotRequests(cluster)).isEqualTo(1);
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(read(client, lifecycle, shuffle, p))
              .isEqualTo(p == 5 ? List.of("the only record") : List.of());
        }
        List<Double> commits = commitRequests(cluster);
        assertThat(commits).containsExactlyInAnyOrder(0.0, 1.0);

        // A second shuffle whose maps all wrote nothing commits without asking any worker.
        lifecycle.registerShuffle(1, MAPS, PARTITIONS);
        ShuffleId empty = new ShuffleId(lifecycle.app(), 1);
        for (int map = 0; map < MAPS; map++) {
          try (MapPusher pusher =
              client.newMapPusher(lifecycle.endpoint(), empty, map, 0, MAPS, PARTITIONS)) {
            pusher.finish();
            client.mapperEnd(lifecycle.endpoint(), empty, map, 0, MAPS, pusher.batchCounts());
          }
        }
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(read(client, lifecycle, empty, p)).isEmpty();
        }
        assertThat(commitRequests(cluster)).isEqualTo(commits);
        assertThat(slotRequests(cluster)).isEqualTo(2);

        // The driver timed both shuffles' phases.
        assertThat(lifecycle.phases().count("commit")).isEqualTo(2);
        assertThat(lifecycle.phases().count("placement")).isEqualTo(2);
        assertThat(lifecycle.phases().count("first_read")).isEqualTo(2);
        assertThat(lifecycle.phases().quantileMillis("placement", 0.5)).isPositive();
      }
    }
  }

  @Test
  void withoutPlacementAtRegistrationTheFirstMapPlaces() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2)) {
      ClientOptions.Settings settings =
          ClientOptions.Settings.from(
              cluster.clientConf().with("faro.client.placement.at.register", "false"));
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("lazy"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        lifecycle.registerShuffle(0, MAPS, PARTITIONS);
        // Long enough for a placement to reach the workers had one started (see the test above).
        Thread.sleep(500);
        assertThat(slotRequests(cluster)).isZero();

        ShuffleId shuffle = new ShuffleId(lifecycle.app(), 0);
        byte[] record = "lazy".getBytes(StandardCharsets.UTF_8);
        for (int map = 0; map < MAPS; map++) {
          try (MapPusher pusher =
              client.newMapPusher(lifecycle.endpoint(), shuffle, map, 0, MAPS, PARTITIONS)) {
            pusher.write(map, record, 0, record.length);
            pusher.cut(map);
            pusher.finish();
            client.mapperEnd(lifecycle.endpoint(), shuffle, map, 0, MAPS, pusher.batchCounts());
          }
        }
        assertThat(slotRequests(cluster)).isEqualTo(1);
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(read(client, lifecycle, shuffle, p))
              .isEqualTo(p < MAPS ? List.of("lazy") : List.of());
        }
      }
    }
  }

  private static List<String> read(
      ShuffleClient client, LifecycleManager lifecycle, ShuffleId shuffle, int partition) {
    List<String> records = new ArrayList<>();
    try (PartitionReader reader =
        client.newReader(lifecycle.endpoint(), shuffle, MAPS, partition, partition + 1, 0, MAPS)) {
      for (Batch b; (b = reader.next()) != null; ) {
        records.add(new String(b.data(), 0, b.length(), StandardCharsets.UTF_8));
      }
    }
    return records;
  }

  private static double slotRequests(MiniFaroCluster cluster) throws Exception {
    return Scrape.of(cluster.masterHttpPort())
        .value("faro_master_requests_total{port=\"rpc\",type=\"request_slots\"}");
  }

  private static List<Double> commitRequests(MiniFaroCluster cluster) throws Exception {
    List<Double> counts = new ArrayList<>();
    for (WorkerServer worker : cluster.workers()) {
      Scrape s = Scrape.of(worker.httpPort());
      String series = "faro_worker_requests_total{port=\"rpc\",type=\"commit_files\"}";
      counts.add(s.has(series) ? s.value(series) : 0.0);
    }
    return counts;
  }

  private static void waitUntilBothWorkersHoldAShuffle(MiniFaroCluster cluster) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (true) {
      int holding = 0;
      for (WorkerServer worker : cluster.workers()) {
        String shuffles = Scrape.get(worker.httpPort(), "/api/v1/shuffles").body();
        holding += Json.number(shuffles, "total_shuffles") == 1 ? 1 : 0;
      }
      if (holding == cluster.workers().size()) {
        return;
      }
      assertThat(System.nanoTime()).as("both workers reserved the shuffle").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
