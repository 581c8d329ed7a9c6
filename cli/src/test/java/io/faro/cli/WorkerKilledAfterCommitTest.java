package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientOptions;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.common.batch.Batch;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real processes: a worker killed with SIGKILL after a shuffle committed, then started again on the
 * same disks and ports, serves the committed data again: readers that started while it was down
 * wait for it (faro.client.worker.restart.wait), and every record is read back, once.
 */
class WorkerKilledAfterCommitTest {
  private static final int MAPS = 3;
  private static final int PARTITIONS = 6;
  private static final int RECORDS = 2_000;

  @Test
  void committedDataIsReadAfterTheWorkerWasKilledAndStartedAgain(@TempDir Path dir)
      throws Exception {
    try (LocalCluster cluster = LocalCluster.start(dir.resolve("cluster"), 1, 1, null, 0)) {
      FaroConf conf =
          FaroConf.of(
              Map.of(
                  "faro.master.endpoints",
                  cluster.masterEndpoint(),
                  "faro.client.lifecycle.host",
                  "127.0.0.1"));
      ClientOptions.Settings settings = ClientOptions.Settings.from(conf);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("killed"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        ShuffleId shuffle = new ShuffleId(lifecycle.app(), 0);
        for (int m = 0; m < MAPS; m++) {
          try (MapPusher pusher =
              client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, MAPS, PARTITIONS)) {
            for (int r = 0; r < RECORDS; r++) {
              byte[] record = ("m" + m + "r" + r + ";").getBytes(StandardCharsets.UTF_8);
              int p = r % PARTITIONS;
              pusher.write(p, record, 0, record.length);
              if (pusher.buffered(p) >= 4096) {
                pusher.cut(p);
              }
            }
            pusher.finish();
            client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, MAPS, pusher.batchCounts());
          }
        }
        // Committed once the readers' file groups are there.
        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, MAPS, 0);
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(groups.lost(p)).as("partition %d", p).isFalse();
        }

        LocalCluster.Member worker = cluster.member("worker-0");
        String portsBefore = worker.ports();
        worker.process().destroyForcibly();
        assertThat(worker.process().waitFor(10, TimeUnit.SECONDS)).isTrue();

        // Reducers start while the worker is down: they find its port closed, and wait.
        ExecutorService readers = Executors.newSingleThreadExecutor();
        Future<Map<String, Integer>> read =
            readers.submit(() -> readAll(client, lifecycle, shuffle));
        // Nothing to wait on: the claim is that readers are still waiting after a while. A second
        // is well past their first refusals (they retry once a second) and far below the wait.
        Thread.sleep(1000);
        assertThat(read).as("readers wait for the worker").isNotDone();
        LocalCluster.Member again = cluster.restart("worker-0");
        for (String port : new String[] {"rpcPort", "pushPort", "fetchPort"}) {
          assertThat(Json.number(again.ports(), port))
              .as(port)
              .isEqualTo(Json.number(portsBefore, port));
        }
        assertThat(Files.readString(dir.resolve("cluster").resolve(LocalCluster.CLUSTER_FILE)))
            .contains("\"pid\": " + again.pid());

        // Every record, once.
        Map<String, Integer> seen = read.get(60, TimeUnit.SECONDS);
        readers.shutdown();
        assertThat(seen).hasSize(MAPS * RECORDS);
        assertThat(seen.values()).allMatch(n -> n == 1);
        // And again, from the worker as it runs now.
        assertThat(readAll(client, lifecycle, shuffle)).isEqualTo(seen);
      }
    }
  }

  private static Map<String, Integer> readAll(
      ShuffleClient client, LifecycleManager lifecycle, ShuffleId shuffle) {
    Map<String, Integer> seen = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      try (PartitionReader reader =
          client.newReader(lifecycle.endpoint(), shuffle, MAPS, p, p + 1, 0, MAPS)) {
        for (Batch b; (b = reader.next()) != null; ) {
          String text = new String(b.data(), 0, b.length(), StandardCharsets.UTF_8);
          for (String record : text.split(";")) {
            if (!record.isEmpty()) {
              seen.merge(record, 1, Integer::sum);
            }
          }
        }
      }
    }
    return seen;
  }
}
