package io.faro.client.it;

import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.common.batch.Batch;
import io.faro.common.network.HostPort;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Seeded random records for shuffle tests. A record is {@code [int length][long mapId][long
 * seq][long key][payload]}: it names its origin, so a reader can tell each record apart and count
 * how often it arrived. Records concatenate, so any record end is a batch boundary.
 */
final class ShuffleWorkload {
  final int maps;
  final int partitions;
  final int recordsPerMap;
  final long seed;

  ShuffleWorkload(int maps, int partitions, int recordsPerMap, long seed) {
    this.maps = maps;
    this.partitions = partitions;
    this.recordsPerMap = recordsPerMap;
    this.seed = seed;
  }

  /**
   * Pushes map {@code mapId}'s records; {@code variant} != 0 changes every payload (a losing
   * attempt's data).
   */
  void writeMap(MapPusher pusher, int mapId, int variant) {
    Random random = new Random(seed * 31 + mapId);
    ByteBuffer record = ByteBuffer.allocate(4 + 24 + 256);
    for (int seq = 0; seq < recordsPerMap; seq++) {
      long key = random.nextLong();
      int payload = random.nextInt(200);
      record.clear();
      record.putInt(24 + payload).putLong(mapId).putLong(seq).putLong(key);
      for (int i = 0; i < payload; i++) {
        record.put((byte) (key + i + variant));
      }
      int partition = Math.floorMod(key, partitions);
      pusher.write(partition, record.array(), 0, record.position());
      if (pusher.buffered(partition) >= pusher.batchSize()) {
        pusher.cut(partition);
      }
      if (pusher.overBufferLimit()) {
        pusher.cutAll();
      }
    }
  }

  /**
   * The partition of each record of map {@code mapId}, by seq (the same draws as {@link
   * #writeMap}).
   */
  int[] partitionsOf(int mapId) {
    Random random = new Random(seed * 31 + mapId);
    int[] result = new int[recordsPerMap];
    for (int seq = 0; seq < recordsPerMap; seq++) {
      long key = random.nextLong();
      random.nextInt(200);
      result[seq] = Math.floorMod(key, partitions);
    }
    return result;
  }

  /** Counts records of a batch into {@code seen[mapId][seq]}; checks partition and payload. */
  void countBatch(Batch batch, int partition, int[][] seen) {
    ByteBuffer in = ByteBuffer.wrap(batch.data(), 0, batch.length());
    while (in.hasRemaining()) {
      int length = in.getInt();
      int mapId = (int) in.getLong();
      int seq = (int) in.getLong();
      long key = in.getLong();
      if (Math.floorMod(key, partitions) != partition) {
        throw new AssertionError(
            "record of map " + mapId + " seq " + seq + " read from partition " + partition);
      }
      for (int i = 0; i < length - 24; i++) {
        if (in.get() != (byte) (key + i)) {
          throw new AssertionError(
              "record of map " + mapId + " seq " + seq + " has a losing attempt's payload");
        }
      }
      seen[mapId][seq]++;
    }
  }

  /**
   * Reads every partition of {@code shuffle} through {@code client}, one reader per partition
   * ({@code afterEach} hears each before it closes); returns how often each record was read.
   */
  int[][] readAll(
      ShuffleClient client,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      Consumer<PartitionReader> afterEach) {
    int[][] seen = new int[maps][recordsPerMap];
    for (int p = 0; p < partitions; p++) {
      try (PartitionReader reader = client.newReader(lifecycle, shuffle, maps, p, p + 1, 0, maps)) {
        for (Batch b; (b = reader.next()) != null; ) {
          countBatch(b, p, seen);
        }
        afterEach.accept(reader);
      }
    }
    return seen;
  }

  /**
   * Reads every partition of {@code shuffle} as a skewed partition's sub-reads do: {@code ranges}
   * readers per partition, each of a contiguous range of maps ({@code afterEach} hears each before
   * it closes); returns how often each record was read.
   */
  int[][] readByMapRanges(
      ShuffleClient client,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int ranges,
      Consumer<PartitionReader> afterEach) {
    int[][] seen = new int[maps][recordsPerMap];
    for (int p = 0; p < partitions; p++) {
      for (int r = 0; r < ranges; r++) {
        int start = maps * r / ranges;
        int end = maps * (r + 1) / ranges;
        try (PartitionReader reader =
            client.newReader(lifecycle, shuffle, maps, p, p + 1, start, end)) {
          for (Batch b; (b = reader.next()) != null; ) {
            countBatch(b, p, seen);
          }
          afterEach.accept(reader);
        }
      }
    }
    return seen;
  }

  /** Fails unless every record was read exactly once. */
  static void assertEveryRecordOnce(int[][] seen) {
    for (int m = 0; m < seen.length; m++) {
      for (int s = 0; s < seen[m].length; s++) {
        if (seen[m][s] != 1) {
          throw new AssertionError(
              "record " + s + " of map " + m + " was read " + seen[m][s] + " times");
        }
      }
    }
  }
}
