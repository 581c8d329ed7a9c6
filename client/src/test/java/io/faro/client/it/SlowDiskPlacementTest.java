package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import io.faro.testing.FaultInjection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disk-load-aware placement on a real cluster: one disk of four is slowed down (the faro-testing
 * module's faro.testing.slow.disk.delay.per.mib, while its marker file is in the disk's directory);
 * within a few heartbeats new shuffles give it fewer partitions than each of its peers, and once it
 * recovers, as many again.
 */
class SlowDiskPlacementTest {
  private static final int MAPS = 4;
  private static final int PARTITIONS = 16;

  /**
   * The heartbeats a worker's recent times span (WorkerReports.RECENT_HEARTBEATS, 6) at the
   * interval this test sets, and one more.
   */
  private static final Duration WINDOW = Duration.ofMillis(7 * 200);

  /** Partitions of the shuffles placed only to count where placement puts them. */
  private static final int PROBE_PARTITIONS = 400;

  @TempDir Path dir;

  private int nextShuffle;

  @Test
  void aSlowedDiskGetsFewerNewPartitionsUntilItRecovers() throws Exception {
    try (MiniFaroCluster cluster =
        MiniFaroCluster.start(
            dir,
            2,
            Map.of(
                "faro.worker.heartbeat.interval", "200ms",
                "faro.worker.disk.check.interval", "100ms",
                "faro.testing.slow.disk.delay.per.mib", "50ms"),
            i ->
                Map.of(
                    "faro.worker.dirs",
                    dir.resolve("w" + i + "d0")
                        + ":ssd,"
                        + dir.resolve("w" + i + "d1")
                        + ":ssd"))) {
      ClientSettings settings =
          ClientSettings.from(cluster.clientConf().with("faro.client.push.compress", "false"));
      String slowDisk = cluster.workers().get(0).workerId().value() + "/1";
      Path marker = dir.resolve("w0d1").resolve(FaultInjection.SLOW_DISK_FILE);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("slow-disk"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);

        // Before: the four disks are about as fast, and none is singled out.
        Map<String, Long> before = Map.of();
        int singledOut = 0;
        for (int i = 0; i < 3; i++) {
          before = measureAndProbe(client, lifecycle);
          singledOut += before.get(slowDisk) < minOfOthers(before, slowDisk) ? 1 : 0;
        }
        assertThat(singledOut)
            .as("probes giving disk %s the fewest: %s", slowDisk, before)
            .isLessThan(3);

        Files.createFile(marker);
        Map<String, Long> slowed =
            placeUntil(
                client,
                lifecycle,
                counts -> counts.get(slowDisk) < minOfOthers(counts, slowDisk),
                "the slowed disk gets fewer partitions than each of its peers");
        long whileSlow = slowed.get(slowDisk);
        // What an operator sees: the status RPC reports the slowed disk's time per MiB.
        WorkerStatusResponse status =
            Futures.await(
                pool.call(
                    cluster.workers().get(0).endpoint().rpc(),
                    WorkerStatusRequest.getDefaultInstance(),
                    WorkerStatusResponse.class),
                Duration.ofSeconds(10),
                "worker status");
        assertThat(status.getDiskFlushMsPerMib(1))
            .as("disk 1's write time per MiB, with 50 ms of delay per MiB")
            .isGreaterThanOrEqualTo(50);
        assertThat(status.getDiskTiersList()).containsExactly("ssd", "ssd");

        Files.delete(marker);
        Map<String, Long> recovered =
            placeUntil(
                client,
                lifecycle,
                counts -> counts.get(slowDisk) >= minOfOthers(counts, slowDisk),
                "the recovered disk gets as many partitions as its peers again");
        assertThat(recovered.get(slowDisk)).isGreaterThan(whileSlow);
      }
    }
  }

  /**
   * Runs shuffles that write to every disk (so that each disk's write time is measured), each
   * followed by a probe placement ({@link #measureAndProbe}), until {@code wanted} holds of three
   * probes in a row (one could be noise); returns the last probe's partitions per disk. Fails after
   * 90 s.
   */
  private Map<String, Long> placeUntil(
      ShuffleClient client,
      LifecycleManager lifecycle,
      java.util.function.Predicate<Map<String, Long>> wanted,
      String what)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    Map<String, Long> counts = Map.of();
    int inARow = 0;
    while (System.nanoTime() < deadline) {
      counts = measureAndProbe(client, lifecycle);
      inARow = counts.size() == 4 && wanted.test(counts) ? inARow + 1 : 0;
      if (inARow == 3) {
        return counts;
      }
    }
    throw new AssertionError("not within 90 s: " + what + "; last placement per disk " + counts);
  }

  /**
   * Lets the times measured so far leave the window, runs a shuffle that writes to every disk, and
   * probes once the masters heard of that shuffle's times (two heartbeats): each probe then sees
   * its own measurements.
   */
  private Map<String, Long> measureAndProbe(ShuffleClient client, LifecycleManager lifecycle)
      throws Exception {
    // Time itself is what is waited for: older measurements age out of the workers' window, and
    // there is no event to wait on instead.
    Thread.sleep(WINDOW.toMillis());
    runShuffle(client, lifecycle);
    // Two heartbeats at 200 ms carry the shuffle's times to the master; the master keeps them in
    // memory and says nothing a test could wait on.
    Thread.sleep(400);
    return probe(client, lifecycle);
  }

  /** Pushes about 8 MiB over every partition and reads it back, every record once. */
  private void runShuffle(ShuffleClient client, LifecycleManager lifecycle) throws Exception {
    EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), nextShuffle++);
    ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 16_000, nextShuffle);
    for (int m = 0; m < MAPS; m++) {
      try (MapPusher pusher =
          client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, MAPS, PARTITIONS)) {
        workload.writeMap(pusher, m, 0);
        pusher.finish();
        client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, MAPS, pusher.batchCounts());
      }
    }
    ShuffleWorkload.assertEveryRecordOnce(
        workload.readAll(client, lifecycle.endpoint(), shuffle, r -> {}));
  }

  /** Places a shuffle of {@link #PROBE_PARTITIONS} and counts its partitions per worker/disk. */
  private Map<String, Long> probe(ShuffleClient client, LifecycleManager lifecycle) {
    EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), nextShuffle++);
    List<PartitionLocation> placed =
        client.pushLocations(lifecycle.endpoint(), shuffle, 1, PROBE_PARTITIONS);
    Map<String, Long> counts =
        placed.stream()
            .collect(
                Collectors.groupingBy(
                    l -> l.worker().value() + "/" + l.diskIndex(), Collectors.counting()));
    return new HashMap<>(counts);
  }

  private static long minOfOthers(Map<String, Long> counts, String disk) {
    return counts.entrySet().stream()
        .filter(e -> !e.getKey().equals(disk))
        .mapToLong(Map.Entry::getValue)
        .min()
        .orElseThrow();
  }
}
