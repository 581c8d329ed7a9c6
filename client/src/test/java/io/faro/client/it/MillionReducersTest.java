package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ReadRange;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.client.testing.Scrape;
import io.faro.common.batch.Batch;
import io.faro.common.id.AppId;
import io.faro.common.network.ClientPool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shape of a Spark job with a million reducers, of which few get data, through a real worker:
 * only the pages the maps push to are placed (in reservations the worker accepts), and every
 * partition is read back, the empty ones included, by readers of ranges that cross pages.
 */
class MillionReducersTest {
  private static final int PARTITIONS = 1_000_000;
  private static final int PAGE = 16_384;

  /** Where the maps write: three clusters, in pages 0, 30 and 61 of the 62. */
  private static final List<Integer> WRITTEN =
      IntStream.concat(
              IntStream.concat(IntStream.range(0, 30), IntStream.range(500_000, 500_020)),
              IntStream.range(PARTITIONS - 10, PARTITIONS))
          .boxed()
          .toList();

  @TempDir Path dir;

  @Test
  void aShuffleOfAMillionPartitionsIsPlacedWhereItIsWrittenAndReadBackWhole() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 1)) {
      ClientSettings settings = ClientSettings.from(cluster.clientConf());
      assertThat(settings.pages().size()).isEqualTo(PAGE);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("wide"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        // Spark registers the shuffle first: 62 pages are too many to place then.
        lifecycle.registerShuffle(0, 2, PARTITIONS);
        Map<Integer, String> written = new HashMap<>();
        for (int m = 0; m < 2; m++) {
          int[] batches;
          try (MapPusher pusher =
              client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, 2, PARTITIONS)) {
            for (int r = 0; r < WRITTEN.size(); r += 1 + m) {
              int partition = WRITTEN.get(r);
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
        // Three pages placed, not 62: 16,384 + 16,384 + 576 (the last page's 1,000,000 - 61 x
        // 16,384) locations on the worker.
        double held =
            Scrape.of(cluster.workers().get(0).httpPort()).value("faro_worker_partitions");
        assertThat(held).isEqualTo(PAGE + PAGE + (PARTITIONS - 61 * PAGE));

        // The whole shuffle's groups, as tools ask for them, count every partition.
        ReducerFileGroups all = client.fileGroups(lifecycle.endpoint(), shuffle, 2, 0);
        assertThat(all.expectedBatches(PARTITIONS - 1)).isEqualTo(1);
        assertThat(all.expectedBatches(PARTITIONS / 2 + 100)).isZero();
        assertThat(all.covers(0, PARTITIONS)).isTrue();

        // Readers of ranges of 30,000 partitions (most cross a page boundary), as AQE coalesces.
        Map<Integer, String> read = new HashMap<>();
        int batches = 0;
        List<int[]> ranges = new ArrayList<>();
        for (int start = 0; start < PARTITIONS; start += 30_000) {
          ranges.add(new int[] {start, Math.min(PARTITIONS, start + 30_000)});
        }
        for (int[] range : ranges) {
          for (int p = range[0]; p < range[1]; p++) {
            if (!written.containsKey(p) && p != range[0]) {
              continue; // empty partitions are read below, in one reader of the whole range
            }
            try (PartitionReader reader =
                client.newReader(
                    lifecycle.endpoint(), shuffle, 2, new ReadRange(p, p + 1, 0, 2), 1)) {
              for (Batch b; (b = reader.next()) != null; ) {
                batches++;
                read.merge(
                    p,
                    new String(b.data(), 0, b.length(), StandardCharsets.UTF_8),
                    (a, c) -> a + "|" + c);
              }
            }
          }
          try (PartitionReader whole =
              client.newReader(
                  lifecycle.endpoint(), shuffle, 2, new ReadRange(range[0], range[1], 0, 2), 2)) {
            int inRange =
                (int)
                    written.keySet().stream()
                        .filter(p -> p >= range[0] && p < range[1])
                        .mapToLong(p -> written.get(p).split("\\|").length)
                        .sum();
            int n = 0;
            while (whole.next() != null) {
              n++;
            }
            assertThat(n)
                .as("batches of partitions %s..%s", range[0], range[1] - 1)
                .isEqualTo(inRange);
          }
        }
        int expectedBatches = written.values().stream().mapToInt(v -> v.split("\\|").length).sum();
        assertThat(batches).isEqualTo(expectedBatches);
        assertThat(read.keySet()).isEqualTo(written.keySet());
        read.forEach(
            (p, records) ->
                assertThat(records.split("\\|"))
                    .containsExactlyInAnyOrder(written.get(p).split("\\|")));
      }
    }
  }
}
