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
import io.faro.common.network.HostPort;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real processes: a worker stopped with SIGTERM while its shuffle is still open (every map pushed,
 * the last map's end not yet reported) exits 0 having sealed what it acknowledged. The commit that
 * the last map's end then starts finds it down and waits (faro.client.worker.restart.wait); the
 * worker, started again on the same disks and ports, answers it with the sealed files, and every
 * record is read back, once, with no partition lost.
 */
class WorkerStoppedBeforeCommitTest {
  private static final int MAPS = 3;
  private static final int PARTITIONS = 8;
  private static final int RECORDS = 3_000;

  @Test
  void aCommitWaitsForAGracefullyStoppedWorkerWhichAnswersItWithItsSealedFiles(@TempDir Path dir)
      throws Exception {
    TextShuffle text = new TextShuffle(MAPS, PARTITIONS, RECORDS);
    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(2))) {
      ClientSettings settings = TextShuffle.settings(cluster);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("stopped"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        int[] lastCounts = null;
        for (int m = 0; m < MAPS; m++) {
          int[] counts = text.push(client, lifecycle.endpoint(), shuffle, m);
          if (m < MAPS - 1) {
            client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, MAPS, counts);
          } else {
            lastCounts = counts;
          }
        }

        LocalCluster.Member worker = cluster.member("worker-0");
        worker.process().destroy(); // SIGTERM: a graceful stop
        assertThat(worker.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(worker.process().exitValue()).as("exit code after SIGTERM").isZero();

        // The last map's end starts the commit: worker-0 refuses connections, and is waited for.
        client.mapperEnd(lifecycle.endpoint(), shuffle, MAPS - 1, 0, MAPS, lastCounts);
        CompletableFuture<ReducerFileGroups> committed =
            CompletableFuture.supplyAsync(
                () -> client.fileGroups(lifecycle.endpoint(), shuffle, MAPS, 0));
        // Nothing to wait on: the claim is that the commit still waits after a while. A second
        // is past its first refusals (it asks again every quarter second) and far below the wait.
        Thread.sleep(1000);
        assertThat(committed).as("the commit waits for the stopped worker").isNotDone();

        LocalCluster.Member again = cluster.restart("worker-0");
        ReducerFileGroups groups = committed.get(60, TimeUnit.SECONDS);
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(groups.lost(p)).as("partition %d lost", p).isFalse();
        }
        // It answered from what it had sealed.
        WorkerStatusResponse status =
            pool.call(
                    new HostPort("127.0.0.1", (int) Json.number(again.ports(), "rpcPort")),
                    WorkerStatusRequest.getDefaultInstance(),
                    WorkerStatusResponse.class)
                .get(30, TimeUnit.SECONDS);
        assertThat(status.getRestoredSealedLocations()).isPositive();

        Map<String, Integer> seen = text.readAll(client, lifecycle.endpoint(), shuffle);
        assertThat(seen).hasSize(text.total());
        assertThat(seen.values()).allMatch(n -> n == 1);
      }
    }
  }
}
