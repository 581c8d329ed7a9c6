package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.testing.Eventually;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import io.faro.worker.server.WorkerServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Revive, split and replication through real workers on loopback: a worker lost while maps push or
 * after the commit, partitions that pass their split threshold, and every record read exactly once
 * afterwards.
 */
class ReviveSplitReplicationTest {
  private static final int MAPS = 6;
  private static final int PARTITIONS = 8;

  @TempDir Path dir;
  private ExecutorService tasks;

  @BeforeEach
  void startTasks() {
    tasks = Executors.newFixedThreadPool(3);
  }

  @AfterEach
  void stopTasks() {
    tasks.shutdownNow();
  }

  private static ClientSettings settings(MiniFaroCluster cluster, boolean replicate) {
    return settings(cluster, replicate, true);
  }

  private static ClientSettings settings(
      MiniFaroCluster cluster, boolean replicate, boolean compress) {
    FaroConf conf =
        cluster
            .clientConf()
            .with("faro.client.push.compress", Boolean.toString(compress))
            .with("faro.client.push.batch.size", "2k")
            .with("faro.client.push.merge.size", "16k")
            .with("faro.client.push.max.in.flight", "2")
            .with("faro.client.fetch.retry.wait", "10ms")
            .with("faro.client.push.replicate.enabled", Boolean.toString(replicate));
    return ClientSettings.from(conf);
  }

  /** Runs maps [from, to) concurrently, each ending with mapper end. */
  private void runMaps(
      ShuffleClient client,
      LifecycleManager lifecycle,
      EngineShuffleId shuffle,
      ShuffleWorkload workload,
      int from,
      int to,
      List<Long> revives)
      throws Exception {
    List<Future<Long>> maps = new ArrayList<>();
    for (int m = from; m < to; m++) {
      int mapId = m;
      maps.add(
          tasks.submit(
              () -> {
                try (MapPusher pusher =
                    client.newMapPusher(
                        lifecycle.endpoint(), shuffle, mapId, 0, MAPS, PARTITIONS)) {
                  workload.writeMap(pusher, mapId, 0);
                  pusher.finish();
                  client.mapperEnd(
                      lifecycle.endpoint(), shuffle, mapId, 0, MAPS, pusher.batchCounts());
                  return pusher.revives();
                }
              }));
    }
    for (Future<Long> f : maps) {
      revives.add(f.get());
    }
  }

  @Test
  void withReplicationAWorkerLostWhileMapsPushLosesNothing() throws Exception {
    try (MiniFaroCluster cluster =
        MiniFaroCluster.start(dir, 3, Map.of("faro.worker.chunk.size", "16k"))) {
      ClientSettings settings = settings(cluster, true);
      ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 3000, 11L);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("replicated"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        List<PartitionLocation> placed =
            client.pushLocations(lifecycle.endpoint(), shuffle, MAPS, PARTITIONS);
        assertThat(placed)
            .allSatisfy(
                l -> {
                  assertThat(l.replica()).isPresent();
                  assertThat(l.replica().get().worker()).isNotEqualTo(l.worker());
                });
        List<Long> revives = new ArrayList<>();
        runMaps(client, lifecycle, shuffle, workload, 0, 3, revives);

        // The worker holding the first partition's primary dies (its connections with it).
        WorkerServer victim = worker(cluster, placed.get(0).worker());
        victim.close();
        runMaps(client, lifecycle, shuffle, workload, 3, MAPS, revives);

        List<Long> fetchRetries = new ArrayList<>();
        ShuffleWorkload.assertEveryRecordOnce(
            workload.readAll(
                client, lifecycle.endpoint(), shuffle, r -> fetchRetries.add(r.fetchRetries())));
        assertThat(revives.stream().mapToLong(Long::longValue).sum())
            .as("pushes moved off the lost worker")
            .isPositive();
        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, MAPS, 0);
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(groups.lost(p)).isFalse();
          assertThat(groups.files(p))
              .noneMatch(f -> f.location().worker().equals(victim.workerId()));
        }
        // Partition 0's first epoch survives only as its replica.
        assertThat(groups.files(0))
            .anyMatch(f -> f.location().epoch() == 0 && f.location().role() == Role.REPLICA);
      }
    }
  }

  @Test
  void withReplicationReadersFallBackToTheReplicaWhenAWorkerDiesAfterTheCommit() throws Exception {
    // Each worker has its own chunk size: a replica must still cut its primary's chunks.
    List<String> chunkSizes = List.of("16k", "24k", "40k");
    try (MiniFaroCluster cluster =
        MiniFaroCluster.start(
            dir, 3, Map.of(), i -> Map.of("faro.worker.chunk.size", chunkSizes.get(i)))) {
      ClientSettings settings = settings(cluster, true);
      ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 3000, 12L);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("failover"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        runMaps(client, lifecycle, shuffle, workload, 0, MAPS, new ArrayList<>());
        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, MAPS, 0);
        // Primary and replica of the same epoch cut the same chunks, by the primary's size.
        for (int p = 0; p < PARTITIONS; p++) {
          Map<Integer, Set<Integer>> chunksByEpoch =
              groups.files(p).stream()
                  .collect(
                      Collectors.groupingBy(
                          f -> f.location().epoch(),
                          Collectors.mapping(
                              ReducerFileGroups.CommittedFile::chunks, Collectors.toSet())));
          assertThat(chunksByEpoch.values()).allSatisfy(counts -> assertThat(counts).hasSize(1));
          assertThat(groups.files(p))
              .extracting(f -> f.location().role())
              .contains(Role.PRIMARY, Role.REPLICA);
        }
        WorkerId primaryOf0 =
            groups.files(0).stream()
                .filter(f -> f.location().role() == Role.PRIMARY)
                .findFirst()
                .orElseThrow()
                .location()
                .worker();
        worker(cluster, primaryOf0).close();

        List<Long> fetchRetries = new ArrayList<>();
        ShuffleWorkload.assertEveryRecordOnce(
            workload.readAll(
                client, lifecycle.endpoint(), shuffle, r -> fetchRetries.add(r.fetchRetries())));
        assertThat(fetchRetries.get(0)).as("partition 0 switched to its replica").isPositive();
      }
    }
  }

  @Test
  void aPartitionPastItsSplitThresholdContinuesOnOtherLocations() throws Exception {
    for (String mode : List.of("soft", "hard")) {
      Path clusterDir = dir.resolve(mode);
      try (MiniFaroCluster cluster =
          MiniFaroCluster.start(
              clusterDir,
              3,
              Map.of(
                  "faro.worker.chunk.size", "16k",
                  "faro.worker.partition.split.threshold", "64k",
                  "faro.worker.partition.split.mode", mode))) {
        // Uncompressed, so that file sizes follow record sizes.
        ClientSettings settings = settings(cluster, false, false);
        // 6 maps x 3000 records x ~130 bytes over 8 partitions: about 290k per partition, 4x the
        // threshold.
        ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 3000, 13L);
        try (ClientPool pool = new ClientPool("test", settings.network());
            LifecycleManager lifecycle =
                new LifecycleManager(new AppId("split-" + mode), settings, pool, "127.0.0.1")) {
          ShuffleClient client = new ShuffleClient(pool, settings);
          EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
          runMaps(client, lifecycle, shuffle, workload, 0, MAPS, new ArrayList<>());
          ShuffleWorkload.assertEveryRecordOnce(
              workload.readAll(client, lifecycle.endpoint(), shuffle, r -> {}));
          ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, MAPS, 0);
          for (int p = 0; p < PARTITIONS; p++) {
            List<ReducerFileGroups.CommittedFile> files = groups.files(p);
            assertThat(files.size())
                .as("%s split: files of partition %d", mode, p)
                .isGreaterThanOrEqualTo(3);
            Set<WorkerId> workers = new HashSet<>();
            files.forEach(f -> workers.add(f.location().worker()));
            assertThat(workers)
                .as("%s split: workers of partition %d", mode, p)
                .hasSizeGreaterThanOrEqualTo(2);
            // A split lets a file grow past the threshold by what was in flight, not without bound.
            assertThat(files).allSatisfy(f -> assertThat(f.bytes()).isLessThan(4 * 64 * 1024));
          }
        }
      }
    }
  }

  @Test
  void aDiskThatFillsUpSendsItsPartitionsToOtherWorkers() throws Exception {
    // Worker 0 may keep 512k of files on its one disk and must keep 256k of them usable: it is
    // full after about 256k, a small part of its share (about 3 MB) of this shuffle.
    Path worker0 = dir.resolve("worker-0");
    try (MiniFaroCluster cluster =
        MiniFaroCluster.start(
            dir,
            3,
            // Load-aware placement gives a disk no more partitions than its space holds at the
            // estimated partition size: estimate 1k, so that the 512k disk gets its share and
            // fills up under them (a guess that is too low is what splits are for).
            Map.of(
                "faro.worker.chunk.size", "16k",
                "faro.master.slots.partition.size.initial", "1k",
                "faro.master.slots.partition.size.min", "1k"),
            i ->
                i != 0
                    ? Map.of()
                    : Map.of(
                        "faro.worker.dirs", worker0 + ":ssd:512k",
                        "faro.worker.tier.ssd.reserve", "256k",
                        "faro.worker.disk.check.interval", "50ms",
                        "faro.worker.flush.buffer.size", "4k"))) {
      ClientSettings settings = settings(cluster, false, false);
      ShuffleWorkload workload = new ShuffleWorkload(MAPS, PARTITIONS, 12_000, 14L);
      WorkerServer full = cluster.workers().get(0);
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("disk-full"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        List<PartitionLocation> placed =
            client.pushLocations(lifecycle.endpoint(), shuffle, MAPS, PARTITIONS);
        assertThat(placed)
            .as("worker 0 starts healthy and gets partitions")
            .anyMatch(l -> l.worker().equals(full.workerId()));
        List<Long> revives = new ArrayList<>();
        runMaps(client, lifecycle, shuffle, workload, 0, MAPS, revives);

        ShuffleWorkload.assertEveryRecordOnce(
            workload.readAll(client, lifecycle.endpoint(), shuffle, r -> {}));
        WorkerStatusResponse status = status(pool, full);
        assertThat(status.getDiskHealth(0))
            .startsWith("full: ")
            .contains("faro.worker.tier.ssd.reserve");
        assertThat(status.getSplitAnswers())
            .as("pushes worker 0 answered with a split")
            .isPositive();
        assertThat(revives.stream().mapToLong(Long::longValue).sum())
            .as("pushes moved on")
            .isPositive();
        long others = 0;
        for (WorkerServer w : cluster.workers().subList(1, 3)) {
          others += status(pool, w).getDiskUsedBytes(0);
        }
        assertThat(status.getDiskUsedBytes(0))
            .as("bytes on the full disk, against %d on the two others", others)
            .isLessThan(others / 8);

        // Once the master heard (heartbeats every second), a new shuffle gets nothing there.
        // The master learns of the full disk only from the next heartbeat: a new shuffle each try.
        AtomicInteger next = new AtomicInteger(1);
        Eventually.awaitEvery(
            Duration.ofMillis(200),
            "a shuffle placed after the heartbeat to avoid the full worker",
            Duration.ofSeconds(15),
            () ->
                client.pushLocations(
                    lifecycle.endpoint(),
                    new EngineShuffleId(lifecycle.app(), next.getAndIncrement()),
                    MAPS,
                    PARTITIONS),
            later -> later.stream().noneMatch(l -> l.worker().equals(full.workerId())));
      }
    }
  }

  /** The status RPC of an in-JVM worker. */
  private static WorkerStatusResponse status(ClientPool pool, WorkerServer worker) {
    return Futures.await(
        pool.call(
            worker.endpoint().rpc(),
            WorkerStatusRequest.getDefaultInstance(),
            WorkerStatusResponse.class),
        Duration.ofSeconds(10),
        "worker status");
  }

  private static WorkerServer worker(MiniFaroCluster cluster, WorkerId id) {
    return cluster.workers().stream()
        .filter(w -> w.workerId().equals(id))
        .findFirst()
        .orElseThrow();
  }
}
