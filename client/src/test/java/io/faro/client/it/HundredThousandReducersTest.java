package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientOptions;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.batch.Batch;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shape of a Spark job with 100,000 reducers through a real worker: placed (one slot request,
 * reservations in requests the worker accepts), a few records pushed by two maps, committed, and
 * every partition read back, the empty ones included.
 */
class HundredThousandReducersTest {
  private static final int PARTITIONS = 100_000;

  @TempDir Path dir;

  @Test
  void aShuffleOfAHundredThousandPartitionsIsPlacedWrittenAndReadBack() throws Exception {
    // One worker that takes at most 60,000 locations per request: the 100,000 must come in parts.
    try (MiniFaroCluster cluster =
        MiniFaroCluster.start(dir, 1, Map.of("faro.worker.reserve.max.locations", "60000"))) {
      ClientOptions.Settings settings = ClientOptions.Settings.from(cluster.clientConf());
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("wide"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        ShuffleId shuffle = new ShuffleId(lifecycle.app(), 0);
        Map<Integer, String> written = new HashMap<>();
        for (int m = 0; m < 2; m++) {
          int[] batches;
          try (MapPusher pusher =
              client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, 2, PARTITIONS)) {
            for (int r = 0; r < 50; r++) {
              int partition = (r * 7_919 + m * 31_337) % PARTITIONS;
              byte[] record = ("map " + m + " record " + r).getBytes(StandardCharsets.UTF_8);
              pusher.write(partition, record, 0, record.length);
              pusher.cut(partition);
              written.merge(
                  partition, new String(record, StandardCharsets.UTF_8), (a, b) -> a + "|" + b);
            }
            pusher.finish();
            batches = pusher.batchCounts();
          }
          client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, 2, batches);
        }

        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, 2, 0);
        assertThat(groups.expectedBatches(PARTITIONS - 1)).isNotNegative();
        Map<Integer, String> read = new HashMap<>();
        int batches = 0;
        for (int p = 0; p < PARTITIONS; p++) {
          try (PartitionReader reader =
              client.newReader(lifecycle.endpoint(), shuffle, 2, p, p + 1, 0, 2)) {
            for (Batch b; (b = reader.next()) != null; ) {
              batches++;
              read.merge(
                  p,
                  new String(b.data(), 0, b.length(), StandardCharsets.UTF_8),
                  (a, c) -> a + "|" + c);
            }
          }
        }
        assertThat(batches).isEqualTo(100);
        assertThat(read.keySet()).isEqualTo(written.keySet());
        read.forEach(
            (p, records) ->
                assertThat(records.split("\\|"))
                    .containsExactlyInAnyOrder(written.get(p).split("\\|")));
      }
    }
  }
}
