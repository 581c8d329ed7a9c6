package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.batch.Batch;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.network.ClientPool;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker that is gone but still counted alive by the master (its heartbeat timeout has not run
 * out) refuses reservations by not answering; the lifecycle manager places its partitions on the
 * other workers instead of failing the shuffle.
 */
class WorkerReplacementTest {
  @Test
  void aWorkerThatCannotReserveIsReplaced(@TempDir Path dir) throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 3)) {
      String gone = cluster.workers().get(1).workerId().value();
      cluster.workers().get(1).close();
      ClientSettings settings = ClientSettings.from(cluster.clientConf());
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("replace"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        ShuffleWorkload workload = new ShuffleWorkload(3, 30, 500, 9L);
        List<PartitionLocation> locations =
            client.pushLocations(lifecycle.endpoint(), shuffle, 3, 30);
        assertThat(locations).hasSize(30).noneMatch(l -> l.worker().value().equals(gone));
        for (int m = 0; m < 3; m++) {
          int[] batches;
          try (MapPusher pusher = client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, 3, 30)) {
            workload.writeMap(pusher, m, 0);
            pusher.finish();
            batches = pusher.batchCounts();
          }
          client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, 3, batches);
        }
        int[][] seen = new int[3][500];
        for (int p = 0; p < 30; p++) {
          try (PartitionReader reader =
              client.newReader(lifecycle.endpoint(), shuffle, 3, p, p + 1, 0, 3)) {
            Batch batch;
            while ((batch = reader.next()) != null) {
              workload.countBatch(batch, p, seen);
            }
          }
        }
        for (int[] map : seen) {
          assertThat(map).containsOnly(1);
        }
      }
    }
  }
}
