package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.network.ClientPool;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path of a shuffle through one master and three real workers on loopback: lazy
 * placement, merged pushes, commit, chunked fetch with prefetch; every record read exactly once,
 * also when batches arrive twice and losing attempts push data of their own.
 */
class ShuffleExactlyOnceTest {
  private static final int MAPS = 50;
  private static final int PARTITIONS = 200;

  @TempDir static Path dir;
  private static MiniFaroCluster cluster;
  private static ClientPool pool;
  private static ClientSettings settings;
  private static ExecutorService tasks;

  @BeforeAll
  static void startCluster() throws IOException {
    // Small chunks and batches so that every partition spans several of each.
    cluster = MiniFaroCluster.start(dir, 3, Map.of("faro.worker.chunk.size", "16k"));
    FaroConf conf =
        cluster
            .clientConf()
            .with("faro.client.push.batch.size", "2k")
            .with("faro.client.push.merge.size", "32k")
            .with("faro.client.fetch.prefetch.chunks", "2")
            .with("faro.client.fetch.retry.wait", "10ms");
    settings = ClientSettings.from(conf);
    pool = new ClientPool("test-client", settings.network());
    tasks = Executors.newFixedThreadPool(4);
  }

  @AfterAll
  static void stopCluster() {
    tasks.shutdownNow();
    pool.close();
    cluster.close();
  }

  /** What one map attempt pushed: bytes as stored, and batches per partition for its mapper end. */
  private record Pushed(long bytes, int[] batchCounts) {}

  private static Pushed push(
      ShuffleClient client,
      LifecycleManager lifecycle,
      EngineShuffleId shuffle,
      ShuffleWorkload workload,
      int mapId,
      int attemptId,
      int variant) {
    try (MapPusher pusher =
        client.newMapPusher(lifecycle.endpoint(), shuffle, mapId, attemptId, MAPS, PARTITIONS)) {
      workload.writeMap(pusher, mapId, variant);
      pusher.finish();
      long total = 0;
      for (long l : pusher.partitionLengths()) {
        total += l;
      }
      return new Pushed(total, pusher.batchCounts());
    }
  }

  @Test
  void everyRecordIsReadExactlyOnce() throws Exception {
    pushAndReadAll(
        "exactly-once",
        new ShuffleWorkload(MAPS, PARTITIONS, 2000, 1L),
        settings,
        // While the app runs (its files go once it ends): placement spread the partitions.
        () ->
            assertThat(cluster.workerDirs())
                .allSatisfy(d -> assertThat(dataFiles(d, "exactly-once")).isNotEmpty()));
  }

  @Test
  void everyCodecIsReadExactlyOnce() throws Exception {
    ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 2000, 4L);
    java.util.Map<io.faro.common.batch.BatchFormat.Codec, Long> stored =
        new java.util.EnumMap<>(io.faro.common.batch.BatchFormat.Codec.class);
    for (io.faro.common.batch.BatchFormat.Codec codec :
        io.faro.common.batch.BatchFormat.Codec.values()) {
      String name = codec.name().toLowerCase(java.util.Locale.ROOT);
      ClientSettings with =
          ClientSettings.from(
              cluster
                  .clientConf()
                  .with("faro.client.push.batch.size", "2k")
                  .with("faro.client.push.merge.size", "32k")
                  .with("faro.client.compression.codec", name));
      assertThat(with.codec()).isEqualTo(codec);
      stored.put(codec, pushAndReadAll("codec-" + name, workload, with));
    }
    // The same records: each codec shrank them its own way (which is smaller depends on the data).
    long none = stored.get(io.faro.common.batch.BatchFormat.Codec.NONE);
    assertThat(stored.get(io.faro.common.batch.BatchFormat.Codec.LZ4)).isLessThan(none);
    assertThat(stored.get(io.faro.common.batch.BatchFormat.Codec.ZSTD))
        .isLessThan(none)
        .isNotEqualTo(stored.get(io.faro.common.batch.BatchFormat.Codec.LZ4));
  }

  /**
   * Pushes every map of {@code workload} at once (on {@link #tasks}), each ending as attempt 0 that
   * wins; the bytes pushed.
   */
  private static long pushEveryMapAtOnce(
      ShuffleClient client,
      LifecycleManager lifecycle,
      EngineShuffleId shuffle,
      ShuffleWorkload workload)
      throws Exception {
    List<Future<Long>> maps = new ArrayList<>();
    for (int m = 0; m < MAPS; m++) {
      int mapId = m;
      maps.add(
          tasks.submit(
              () -> {
                Pushed pushed = push(client, lifecycle, shuffle, workload, mapId, 0, 0);
                assertThat(
                        client.mapperEnd(
                            lifecycle.endpoint(), shuffle, mapId, 0, MAPS, pushed.batchCounts()))
                    .isZero();
                return pushed.bytes();
              }));
    }
    long pushed = 0;
    for (Future<Long> f : maps) {
      pushed += f.get();
    }
    return pushed;
  }

  /**
   * Pushes every map of {@code workload} with {@code with}, reads it all back; the bytes pushed.
   */
  private static long pushAndReadAll(String app, ShuffleWorkload workload, ClientSettings with)
      throws Exception {
    return pushAndReadAll(app, workload, with, () -> {});
  }

  /** As above; {@code whileOpen} runs after the read, before the app ends. */
  private static long pushAndReadAll(
      String app, ShuffleWorkload workload, ClientSettings with, Runnable whileOpen)
      throws Exception {
    try (LifecycleManager lifecycle =
        new LifecycleManager(new AppId(app), with, pool, "127.0.0.1")) {
      ShuffleClient client = new ShuffleClient(pool, with);
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      long pushed = pushEveryMapAtOnce(client, lifecycle, shuffle, workload);
      AtomicLong read = new AtomicLong();
      ShuffleWorkload.assertEveryRecordOnce(
          workload.readAll(
              client, lifecycle.endpoint(), shuffle, r -> read.addAndGet(r.bytesRead())));
      assertThat(read.get()).isEqualTo(pushed);
      whileOpen.run();
      return pushed;
    }
  }

  @Test
  void readersOfMapRangesFetchOnlyTheChunksThatHoldTheirMaps() throws Exception {
    int partitions = 4;
    int ranges = 5;
    ShuffleWorkload workload = new ShuffleWorkload(MAPS, partitions, 2000, 6L);
    try (LifecycleManager lifecycle =
        new LifecycleManager(new AppId("map-ranges"), settings, pool, "127.0.0.1")) {
      ShuffleClient client = new ShuffleClient(pool, settings);
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      // One map after the other, as waves of map tasks do: each partition's chunks then hold the
      // batches of a few neighbouring maps.
      for (int m = 0; m < MAPS; m++) {
        try (MapPusher pusher =
            client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, MAPS, partitions)) {
          workload.writeMap(pusher, m, 0);
          pusher.finish();
          assertThat(
                  client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, MAPS, pusher.batchCounts()))
              .isZero();
        }
      }
      AtomicLong whole = new AtomicLong();
      ShuffleWorkload.assertEveryRecordOnce(
          workload.readAll(
              client, lifecycle.endpoint(), shuffle, r -> whole.addAndGet(r.chunksRead())));
      AtomicLong byRange = new AtomicLong();
      AtomicLong skipped = new AtomicLong();
      ShuffleWorkload.assertEveryRecordOnce(
          workload.readByMapRanges(
              client,
              lifecycle.endpoint(),
              shuffle,
              ranges,
              r -> {
                byRange.addAndGet(r.chunksRead());
                skipped.addAndGet(r.chunksSkipped());
              }));
      // Without skipping, each of the 5 sub-reads would fetch every chunk of its partition. With
      // it, they fetch each chunk about once: a chunk at the seam of two ranges holds maps of both.
      assertThat(whole.get()).as("chunks of the whole shuffle").isGreaterThan(20L * partitions);
      assertThat(byRange.get() + skipped.get()).isEqualTo(ranges * whole.get());
      assertThat(byRange.get())
          .as("chunks fetched by the sub-reads, against %d in all", whole.get())
          .isLessThanOrEqualTo(whole.get() + (long) (ranges - 1) * partitions * 2);
    }
  }

  /**
   * Maps pushed at once share chunks, so a chunk holds batches of several sub-reads' maps. The
   * worker sends each sub-read only its maps' batches: between them, the sub-reads of a partition
   * fetch its bytes once, counted by the reader and by the workers alike.
   */
  @Test
  void theSubReadsOfMapsPushedAtOnceFetchEachByteOnce() throws Exception {
    int ranges = 5;
    ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 1000, 9L);
    try (LifecycleManager lifecycle =
        new LifecycleManager(new AppId("map-ranges-at-once"), settings, pool, "127.0.0.1")) {
      ShuffleClient client = new ShuffleClient(pool, settings);
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      long pushed = pushEveryMapAtOnce(client, lifecycle, shuffle, workload);
      double[] before = fetchTraffic();
      AtomicLong read = new AtomicLong();
      AtomicLong chunks = new AtomicLong();
      ShuffleWorkload.assertEveryRecordOnce(
          workload.readByMapRanges(
              client,
              lifecycle.endpoint(),
              shuffle,
              ranges,
              r -> {
                read.addAndGet(r.bytesRead());
                chunks.addAndGet(r.chunksRead());
              }));
      double[] after = fetchTraffic();
      assertThat(read.get()).as("bytes the sub-reads fetched").isEqualTo(pushed);
      assertThat(after[0] - before[0]).as("bytes the workers served").isEqualTo((double) pushed);
      // The chunks were shared: the workers left other maps' batches out of them.
      assertThat(after[1] - before[1]).as("bytes left out").isPositive();
      assertThat(chunks.get()).isGreaterThan((long) PARTITIONS);
    }
  }

  /** Bytes the workers served to readers, and bytes they left out of answers to sub-reads. */
  private static double[] fetchTraffic() throws Exception {
    double[] traffic = new double[2];
    for (io.faro.worker.server.WorkerServer worker : cluster.workers()) {
      io.faro.client.testing.Scrape scrape = io.faro.client.testing.Scrape.of(worker.httpPort());
      traffic[0] += scrape.value("faro_worker_fetched_bytes_total");
      traffic[1] += scrape.value("faro_worker_fetch_left_out_bytes_total");
    }
    return traffic;
  }

  @Test
  void duplicatedBatchesAndLosingAttemptsAreFilteredOut() throws Exception {
    ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 1000, 2L);
    try (LifecycleManager lifecycle =
        new LifecycleManager(new AppId("duplicates"), settings, pool, "127.0.0.1")) {
      ShuffleClient client = new ShuffleClient(pool, settings);
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      List<Future<long[]>> maps = new ArrayList<>();
      for (int m = 0; m < MAPS; m++) {
        int mapId = m;
        maps.add(
            tasks.submit(
                () -> {
                  long extra = 0;
                  Pushed loser = null;
                  if (mapId % 5 == 0) {
                    // A speculative attempt that loses: different payloads, pushed before the
                    // winner ends.
                    loser = push(client, lifecycle, shuffle, workload, mapId, 1, 7);
                    extra += loser.bytes();
                  }
                  Pushed winner = push(client, lifecycle, shuffle, workload, mapId, 0, 0);
                  if (mapId % 7 == 0) {
                    // A retried push: the same batches (same ids) arrive a second time.
                    extra += push(client, lifecycle, shuffle, workload, mapId, 0, 0).bytes();
                  }
                  assertThat(
                          client.mapperEnd(
                              lifecycle.endpoint(), shuffle, mapId, 0, MAPS, winner.batchCounts()))
                      .isZero();
                  if (loser != null) {
                    assertThat(
                            client.mapperEnd(
                                lifecycle.endpoint(), shuffle, mapId, 1, MAPS, loser.batchCounts()))
                        .isZero();
                  }
                  return new long[] {winner.bytes(), extra};
                }));
      }
      long winners = 0;
      long extra = 0;
      for (Future<long[]> f : maps) {
        winners += f.get()[0];
        extra += f.get()[1];
      }
      AtomicLong read = new AtomicLong();
      ShuffleWorkload.assertEveryRecordOnce(
          workload.readAll(
              client, lifecycle.endpoint(), shuffle, r -> read.addAndGet(r.bytesRead())));
      // The duplicates really were stored and fetched; the reader dropped them.
      assertThat(extra).isPositive();
      assertThat(read.get()).isEqualTo(winners + extra);
    }
  }

  @Test
  void aCorruptedByteOnDiskIsDetectedByTheReader() throws Exception {
    ShuffleWorkload workload = new ShuffleWorkload(4, PARTITIONS, 2000, 3L);
    try (LifecycleManager lifecycle =
        new LifecycleManager(new AppId("corruption"), settings, pool, "127.0.0.1")) {
      ShuffleClient client = new ShuffleClient(pool, settings);
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      for (int m = 0; m < 4; m++) {
        int[] batches;
        try (MapPusher pusher =
            client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, 4, PARTITIONS)) {
          workload.writeMap(pusher, m, 0);
          pusher.finish();
          batches = pusher.batchCounts();
        }
        client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, 4, batches);
      }
      client.fileGroups(lifecycle.endpoint(), shuffle, 4, 0); // waits for the commit
      Path file =
          cluster.workerDirs().stream()
              .flatMap(d -> dataFiles(d, "corruption").stream())
              .max(Comparator.comparingLong(ShuffleExactlyOnceTest::size))
              .orElseThrow();
      int partition = Integer.parseInt(file.getFileName().toString().split("-")[0]);
      try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
        raf.seek(100);
        int b = raf.read();
        raf.seek(100);
        raf.write(b ^ 0x01);
      }
      assertThatThrownBy(
              () -> {
                try (PartitionReader reader =
                    client.newReader(
                        lifecycle.endpoint(), shuffle, 4, partition, partition + 1, 0, 4)) {
                  while (reader.next() != null) {
                    // read until the damaged batch
                  }
                }
              })
          .isInstanceOf(FaroException.class)
          // Without a replica, the damaged chunk has no other copy: the data is lost, and the
          // engine re-runs the map stage. The cause names the checksum failure.
          .satisfies(e -> assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.DATA_LOST))
          .hasMessageContaining("partition " + partition)
          .hasMessageContaining("CRC32C mismatch");
    }
  }

  private static long size(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      throw new RuntimeException(e);
    }
  }

  private static List<Path> dataFiles(Path workerDir, String app) {
    Path appDir = workerDir.resolve(app);
    if (!Files.isDirectory(appDir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(appDir)) {
      return files.filter(p -> p.toString().endsWith(".data")).toList();
    } catch (IOException e) {
      throw new RuntimeException(e);
    }
  }
}
