package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.common.id.AppId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import java.nio.file.Files;
import java.nio.file.Path;
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
    TextShuffle text = new TextShuffle(MAPS, PARTITIONS, RECORDS);
    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(1))) {
      ClientSettings settings = TextShuffle.settings(cluster);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("killed"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        for (int m = 0; m < MAPS; m++) {
          int[] counts = text.push(client, lifecycle.endpoint(), shuffle, m);
          client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, MAPS, counts);
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
            readers.submit(() -> text.readAll(client, lifecycle.endpoint(), shuffle));
        // Nothing to wait on: the claim is that readers are still waiting after a while. A second
        // is well past their first refusals (they retry every quarter second) and far below the
        // wait.
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
        assertThat(seen).hasSize(text.total());
        assertThat(seen.values()).allMatch(n -> n == 1);
        // And again, from the worker as it runs now.
        assertThat(text.readAll(client, lifecycle.endpoint(), shuffle)).isEqualTo(seen);
      }
    }
  }
}
