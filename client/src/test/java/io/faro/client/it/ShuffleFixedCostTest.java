package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.client.testing.Scrape;
import io.faro.common.batch.Batch;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.WorkerId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.worker.server.WorkerServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a shuffle costs beyond its data, against a real master and real workers: a shuffle is placed
 * when the driver registers it, before any map asks (one slot request, counted by the master's
 * {@code /metrics}); its readers wait only for the workers that hold data, so a shuffle whose maps
 * wrote nothing is answered with every worker gone, and a worker holding only empty partitions may
 * be down; empty partitions read as empty, never as lost; and the driver times every phase. The
 * workers are closed, and a commit that waited for them would wait faro.client.worker.restart.wait
 * (set far above the test's timeout) and then lose their partitions.
 */
@Timeout(value = 100, unit = TimeUnit.SECONDS)
class ShuffleFixedCostTest {
  private static final int MAPS = 3;
  private static final int PARTITIONS = 8;

  @TempDir Path dir;

  private static ClientSettings settings(MiniFaroCluster cluster, String atRegister) {
    return ClientSettings.from(
        cluster
            .clientConf()
            .with("faro.client.placement.at.register", atRegister)
            .with("faro.client.worker.restart.wait", "10m"));
  }

  @Test
  void aShuffleWhoseMapsWroteNothingIsPlacedAtRegistrationAndReadWithNoWorkerLeft()
      throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2)) {
      ClientSettings settings = settings(cluster, "true");
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("fixed-cost"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);

        // Placed and reserved on both workers with no map task asking.
        lifecycle.registerShuffle(0, MAPS, PARTITIONS);
        waitUntilBothWorkersHoldAShuffle(cluster);
        assertThat(slotRequests(cluster)).isEqualTo(1);

        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        List<MapPusher> pushers = new ArrayList<>();
        for (int map = 0; map < MAPS; map++) {
          pushers.add(client.newMapPusher(lifecycle.endpoint(), shuffle, map, 0, MAPS, PARTITIONS));
        }
        // The maps found the registration's placement: no second slot request.
        assertThat(slotRequests(cluster)).isEqualTo(1);
        for (WorkerServer worker : cluster.workers()) {
          worker.close();
        }
        for (int map = 0; map < MAPS; map++) {
          MapPusher pusher = pushers.get(map);
          pusher.finish();
          client.mapperEnd(lifecycle.endpoint(), shuffle, map, 0, MAPS, pusher.batchCounts());
          pusher.close();
        }
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(read(client, lifecycle, shuffle, p)).isEmpty();
        }
        // The driver timed the shuffle's phases.
        assertThat(lifecycle.phases().count("placement")).isEqualTo(1);
        assertThat(lifecycle.phases().count("commit")).isEqualTo(1);
        assertThat(lifecycle.phases().count("first_read")).isEqualTo(1);
        assertThat(lifecycle.phases().quantileMillis("placement", 0.5)).isPositive();
      }
    }
  }

  @Test
  void readersWaitOnlyForTheWorkersThatHoldData() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2)) {
      ClientSettings settings = settings(cluster, "false");
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("sparse"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        lifecycle.registerShuffle(0, MAPS, PARTITIONS);
        // Absence cannot be waited for: long enough for a placement to reach the master had one
        // started (one takes a few milliseconds, see the test above).
        Thread.sleep(500);
        assertThat(slotRequests(cluster)).isZero();

        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        List<PartitionLocation> locations =
            client.pushLocations(lifecycle.endpoint(), shuffle, MAPS, PARTITIONS);
        assertThat(slotRequests(cluster)).isEqualTo(1);
        // Only partition 5 gets data; the worker that does not hold it goes away.
        WorkerId holder = locations.get(5).worker();
        WorkerServer idle =
            cluster.workers().stream().filter(w -> !w.workerId().equals(holder)).findFirst().get();
        assertThat(locations)
            .as("the placement used both workers")
            .anyMatch(l -> l.worker().equals(idle.workerId()));
        idle.close();
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
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(read(client, lifecycle, shuffle, p))
              .isEqualTo(p == 5 ? List.of("the only record") : List.of());
        }
      }
    }
  }

  private static List<String> read(
      ShuffleClient client, LifecycleManager lifecycle, EngineShuffleId shuffle, int partition) {
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

  private static void waitUntilBothWorkersHoldAShuffle(MiniFaroCluster cluster) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (true) {
      int holding = 0;
      for (WorkerServer worker : cluster.workers()) {
        String shuffles =
            Scrape.get(worker.httpPort(), "/api/v1/shuffles", cluster.adminToken()).body();
        holding += Json.number(shuffles, "total_shuffles") == 1 ? 1 : 0;
      }
      if (holding == cluster.workers().size()) {
        return;
      }
      assertThat(System.nanoTime()).as("both workers reserved the shuffle").isLessThan(deadline);
      Thread.sleep(20); // the poll interval of this bounded wait
    }
  }
}
