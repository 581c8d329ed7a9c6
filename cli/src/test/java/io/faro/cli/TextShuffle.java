package io.faro.cli;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.common.batch.Batch;
import io.faro.common.config.FaroConf;
import io.faro.common.network.HostPort;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * A shuffle of text records {@code m<map>r<record>;} pushed through a real cluster with the client
 * library, and read back counting each record: for tests that stop or kill workers around it.
 */
final class TextShuffle {
  private final int maps;
  private final int partitions;
  private final int records;

  TextShuffle(int maps, int partitions, int records) {
    this.maps = maps;
    this.partitions = partitions;
    this.records = records;
  }

  /** Client settings for a lifecycle manager and executors on this machine. */
  static ClientSettings settings(LocalCluster cluster) {
    return ClientSettings.from(
        FaroConf.of(
            Map.of(
                "faro.master.endpoints",
                cluster.masterEndpoint(),
                "faro.client.lifecycle.host",
                "127.0.0.1")));
  }

  /**
   * Pushes every record of map {@code m}; returns its batch counts (its mapper end is not sent).
   */
  int[] push(ShuffleClient client, HostPort lifecycle, EngineShuffleId shuffle, int m) {
    try (MapPusher pusher = client.newMapPusher(lifecycle, shuffle, m, 0, maps, partitions)) {
      for (int r = 0; r < records; r++) {
        byte[] record = ("m" + m + "r" + r + ";").getBytes(StandardCharsets.UTF_8);
        int p = r % partitions;
        pusher.write(p, record, 0, record.length);
        if (pusher.buffered(p) >= 4096) {
          pusher.cut(p);
        }
      }
      pusher.finish();
      return pusher.batchCounts();
    }
  }

  /** Every record read back from every partition, with how many times it was read. */
  Map<String, Integer> readAll(ShuffleClient client, HostPort lifecycle, EngineShuffleId shuffle) {
    Map<String, Integer> seen = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      try (PartitionReader reader = client.newReader(lifecycle, shuffle, maps, p, p + 1, 0, maps)) {
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

  /** How many records the shuffle holds in all. */
  int total() {
    return maps * records;
  }
}
