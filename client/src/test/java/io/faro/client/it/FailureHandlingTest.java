package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.MapAttempt;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.batch.Batch;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.worker.server.WorkerServer;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Failures must end in a loud error or a recovery, never in lost records or leaked memory. */
class FailureHandlingTest {
  @TempDir Path dir;

  @Test
  void aWorkerThatRestartedBeforeCommitLosesOnlyItsPartitionsAndTheirReadersFailLoudly()
      throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2)) {
      ClientSettings settings = ClientSettings.from(cluster.clientConf());
      WorkerServer restarted = null;
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("restart"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        ShuffleWorkload workload = new ShuffleWorkload(3, 10, 500, 9L);
        int[][] batches = new int[3][];
        for (int m = 0; m < 3; m++) {
          try (MapPusher pusher = client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, 3, 10)) {
            workload.writeMap(pusher, m, 0);
            pusher.finish();
            batches[m] = pusher.batchCounts();
          }
          if (m < 2) {
            client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, 3, batches[m]);
          }
        }
        // Worker 0 restarts on the same id and ports: it no longer holds the pushed data.
        WorkerServer old = cluster.workers().get(0);
        WorkerEndpoint endpoint = old.endpoint();
        String id = old.workerId().value();
        old.close();
        restarted =
            new WorkerServer(
                FaroConf.of(
                        Map.of(
                            "faro.worker.host", "127.0.0.1",
                            "faro.worker.id", id,
                            "faro.worker.rpc.port", "" + endpoint.rpcPort(),
                            "faro.worker.push.port", "" + endpoint.pushPort(),
                            "faro.worker.fetch.port", "" + endpoint.fetchPort(),
                            "faro.worker.http.port", "0",
                            "faro.worker.dirs", cluster.workerDirs().get(0) + ":ssd",
                            "faro.master.endpoints", "127.0.0.1:" + cluster.masterPort()))
                    .withAll(cluster.memberAuth()));
        restarted.start();
        client.mapperEnd(lifecycle.endpoint(), shuffle, 2, 0, 3, batches[2]);

        // Its partitions are lost (the engine re-runs the map stage); the other worker's are read.
        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, 3, 0);
        List<Integer> lostPartitions = new ArrayList<>();
        List<Integer> readable = new ArrayList<>();
        for (int p = 0; p < 10; p++) {
          (groups.lost(p) ? lostPartitions : readable).add(p);
        }
        assertThat(lostPartitions).isNotEmpty();
        assertThat(readable).isNotEmpty();
        int lostOne = lostPartitions.get(0);
        assertThatThrownBy(
                () ->
                    client.newReader(lifecycle.endpoint(), shuffle, 3, lostOne, lostOne + 1, 0, 3))
            .isInstanceOf(FaroException.class)
            .satisfies(e -> assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.DATA_LOST))
            .hasMessageContaining("partition " + lostOne)
            .hasMessageContaining("no committed copy");
        int[][] seen = new int[3][500];
        for (int p : readable) {
          try (PartitionReader reader =
              client.newReader(lifecycle.endpoint(), shuffle, 3, p, p + 1, 0, 3)) {
            for (Batch b; (b = reader.next()) != null; ) {
              workload.countBatch(b, p, seen);
            }
          }
        }
        for (int m = 0; m < 3; m++) {
          int[] partitionOf = workload.partitionsOf(m);
          for (int seq = 0; seq < 500; seq++) {
            assertThat(seen[m][seq])
                .as("record %d of map %d (partition %d)", seq, m, partitionOf[seq])
                .isEqualTo(readable.contains(partitionOf[seq]) ? 1 : 0);
          }
        }
      } finally {
        if (restarted != null) {
          restarted.close();
        }
      }
    }
  }

  @Test
  void aCommitToAWorkerThatHangsGivesUpOnceTheMastersDeclareItLostNotAfterTheCommitTimeout()
      throws Exception {
    try (MiniFaroCluster cluster =
        MiniFaroCluster.start(dir, 2, Map.of("faro.master.worker.timeout", "3s"))) {
      ClientSettings settings =
          ClientSettings.from(
              cluster
                  .clientConf()
                  .withAll(
                      FaroConf.of(
                          Map.of(
                              "faro.client.app.heartbeat.interval", "500ms",
                              "faro.client.commit.timeout", "300s"))));
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("hung"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        ShuffleWorkload workload = new ShuffleWorkload(2, 10, 500, 11L);
        int[][] batches = new int[2][];
        for (int m = 0; m < 2; m++) {
          try (MapPusher pusher = client.newMapPusher(lifecycle.endpoint(), shuffle, m, 0, 2, 10)) {
            workload.writeMap(pusher, m, 0);
            pusher.finish();
            batches[m] = pusher.batchCounts();
          }
        }
        client.mapperEnd(lifecycle.endpoint(), shuffle, 0, 0, 2, batches[0]);
        // Worker 0 hangs: its RPC port still takes connections but nothing answers, and the
        // masters stop hearing its heartbeats.
        WorkerServer hung = cluster.workers().get(0);
        int rpcPort = hung.endpoint().rpcPort();
        hung.close();
        try (SilentPort silent = new SilentPort(rpcPort)) {
          long start = System.nanoTime();
          client.mapperEnd(lifecycle.endpoint(), shuffle, 1, 0, 2, batches[1]);
          ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, 2, 0);
          Duration took = Duration.ofNanos(System.nanoTime() - start);

          // Far below the 300 s commit timeout: the commit to the hung worker gave up once the
          // masters declared it lost (3 s without heartbeats, then the next app heartbeat).
          assertThat(took).isLessThan(Duration.ofSeconds(150));
          List<Integer> lost = new ArrayList<>();
          for (int p = 0; p < 10; p++) {
            if (groups.lost(p)) {
              lost.add(p);
            }
          }
          assertThat(lost)
              .as("the hung worker's partitions (no replicas)")
              .isNotEmpty()
              .hasSizeLessThan(10);
          assertThat(silent.accepted())
              .as("the commit did reach the hung worker's port")
              .isPositive();
        }
      }
    }
  }

  /** A port that takes connections and never answers on them: a hung worker. */
  private static final class SilentPort implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> accepted = Collections.synchronizedList(new ArrayList<>());

    SilentPort(int port) throws java.io.IOException {
      server = new ServerSocket(port);
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    accepted.add(server.accept());
                  }
                } catch (java.io.IOException e) {
                  // closed
                }
              },
              "silent-port");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return server.getLocalPort();
    }

    /** Connections taken so far. */
    int accepted() {
      return accepted.size();
    }

    @Override
    public void close() throws java.io.IOException {
      server.close();
      synchronized (accepted) {
        for (Socket socket : accepted) {
          socket.close();
        }
      }
    }
  }

  /** Counts every buffer it hands out, so a test can check they all came back. */
  private static final class TrackingAllocator extends AbstractByteBufAllocator {
    final List<ByteBuf> made = Collections.synchronizedList(new ArrayList<>());

    TrackingAllocator() {
      super(true);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initial, int max) {
      ByteBuf b = Unpooled.buffer(initial, max);
      made.add(b);
      return b;
    }

    @Override
    protected ByteBuf newDirectBuffer(int initial, int max) {
      ByteBuf b = Unpooled.directBuffer(initial, max);
      made.add(b);
      return b;
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }

  @Test
  void aPusherWhosePushesTimeOutReleasesEveryBatch() throws Exception {
    // A worker that accepts connections and never answers.
    try (SilentPort silent = new SilentPort(0)) {
      ClientSettings settings =
          ClientSettings.from(
              FaroConf.of(
                  Map.of(
                      "faro.client.push.batch.size", "1k",
                      "faro.client.push.merge.size", "1k",
                      "faro.client.push.max.in.flight", "1",
                      "faro.network.request.timeout", "300ms")));
      TrackingAllocator allocator = new TrackingAllocator();
      int port = silent.port();
      WorkerEndpoint endpoint = new WorkerEndpoint("127.0.0.1", port, port, port);
      List<PartitionLocation> locations =
          List.of(
              new PartitionLocation(0, 0, Role.PRIMARY, new WorkerId("silent"), endpoint, 0),
              new PartitionLocation(1, 0, Role.PRIMARY, new WorkerId("silent-2"), endpoint, 0));
      try (ClientPool pool = new ClientPool("test", settings.network())) {
        MapPusher pusher =
            new MapPusher(
                new ShuffleId(new AppId("a"), 0),
                new MapAttempt(0, 0),
                locations,
                2,
                pool,
                settings,
                allocator);
        assertThatThrownBy(
                () -> {
                  try (pusher) {
                    for (int i = 0; i < 20; i++) {
                      pusher.write(i % 2, new byte[2048], 0, 2048);
                      pusher.cut(i % 2);
                    }
                    pusher.finish();
                  }
                })
            .isInstanceOf(FaroException.class)
            .hasMessageContaining("300ms");
      }
      // The pool is closed: every push frame was written or dropped by now.
      assertThat(allocator.made).isNotEmpty().allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }
  }

  @Test
  void aPlacementThatFailedIsTriedAgainByTheNextTask() throws Exception {
    try (MiniFaroCluster cluster =
        MiniFaroCluster.start(dir, 1, Map.of("faro.master.client.retry.timeout", "1s"))) {
      FaroConf conf = cluster.clientConf().with("faro.master.client.retry.timeout", "1s");
      ClientSettings settings = ClientSettings.from(conf);
      // The only worker is gone, but the master still counts it alive: placement fails.
      cluster.workers().get(0).close();
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("retry"), settings, pool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        assertThatThrownBy(() -> client.pushLocations(lifecycle.endpoint(), shuffle, 1, 4))
            .isInstanceOf(FaroException.class);

        WorkerServer replacement =
            new WorkerServer(
                FaroConf.of(
                        Map.of(
                            "faro.worker.host",
                            "127.0.0.1",
                            "faro.worker.rpc.port",
                            "0",
                            "faro.worker.push.port",
                            "0",
                            "faro.worker.fetch.port",
                            "0",
                            "faro.worker.http.port",
                            "0",
                            "faro.worker.dirs",
                            dir.resolve("replacement") + ":ssd",
                            "faro.master.endpoints",
                            "127.0.0.1:" + cluster.masterPort()))
                    .withAll(cluster.memberAuth()));
        try (replacement) {
          replacement.start();
          List<PartitionLocation> locations =
              client.pushLocations(lifecycle.endpoint(), shuffle, 1, 4);
          assertThat(locations).hasSize(4).allMatch(l -> l.worker().equals(replacement.workerId()));
        }
      }
    }
  }

  @Test
  void aLostGenerationIsNeverWrittenAgainByANewStageAttempt() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 1)) {
      ClientSettings settings = ClientSettings.from(cluster.clientConf());
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("generations"), settings, pool, "127.0.0.1")) {
        List<Integer> lostShuffles = Collections.synchronizedList(new ArrayList<>());
        lifecycle.onShuffleLost(lostShuffles::add);
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 7);
        long stage3 = ShuffleClient.stageKey(3, 0);
        ShuffleId first =
            client.pushTargets(lifecycle.endpoint(), shuffle, stage3, 1, 2).faroShuffle();
        // Another stage object of a later job, attempt 0 too, shares the generation while it is
        // fine.
        assertThat(
                client
                    .pushTargets(lifecycle.endpoint(), shuffle, ShuffleClient.stageKey(4, 0), 1, 2)
                    .faroShuffle())
            .isEqualTo(first);

        client.reportLost(lifecycle.endpoint(), first, 0, "test");
        assertThat(lostShuffles).containsExactly(7);

        // The re-run, whether attempt 1 of stage 3 or attempt 0 of a new stage 5, writes a new
        // generation.
        ShuffleId rerun =
            client
                .pushTargets(lifecycle.endpoint(), shuffle, ShuffleClient.stageKey(3, 1), 1, 2)
                .faroShuffle();
        assertThat(rerun).isNotEqualTo(first);
        ShuffleId newStage =
            client
                .pushTargets(lifecycle.endpoint(), shuffle, ShuffleClient.stageKey(5, 0), 1, 2)
                .faroShuffle();
        assertThat(newStage).isEqualTo(rerun);
        // A zombie task of the lost attempt keeps its generation, and may not report success.
        int[] zombieBatches;
        try (MapPusher pusher =
            client.newMapPusher(
                lifecycle.endpoint(), shuffle, stage3, new MapAttempt(0, 0), 1, 2)) {
          pusher.write(0, new byte[100], 0, 100);
          pusher.finish();
          zombieBatches = pusher.batchCounts();
        }
        assertThatThrownBy(
                () ->
                    client.mapperEnd(
                        lifecycle.endpoint(),
                        shuffle,
                        stage3,
                        new MapAttempt(0, 0),
                        1,
                        zombieBatches))
            .isInstanceOf(FaroException.class)
            .satisfies(e -> assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.DATA_LOST));
      }
    }
  }

  /**
   * A stage the engine rolls back (Spark, after a parent re-ran with another checksum) runs every
   * map again in a new attempt, while some maps of its generation already ended in the old one:
   * since the first attempt of a map wins in a generation, the re-run writes a new generation, or
   * the readers would read the dropped outputs beside the re-run's. A new attempt that re-runs only
   * the maps the engine lacks keeps the generation.
   */
  @Test
  void aStageAttemptThatReRunsEveryMapAfterTheEngineDroppedThemWritesANewGeneration()
      throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 1)) {
      ClientSettings settings = ClientSettings.from(cluster.clientConf());
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("rollback"), settings, pool, "127.0.0.1")) {
        java.util.concurrent.atomic.AtomicInteger engineHolds =
            new java.util.concurrent.atomic.AtomicInteger();
        lifecycle.engineOutputs(shuffleId -> shuffleId == 11 ? engineHolds.get() : -1);
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 11);
        long attempt0 = ShuffleClient.stageKey(4, 0);
        ShuffleId first =
            client.pushTargets(lifecycle.endpoint(), shuffle, attempt0, 3, 2).faroShuffle();
        client.mapperEnd(
            lifecycle.endpoint(), shuffle, attempt0, new MapAttempt(0, 0), 3, new int[0]);
        engineHolds.set(1);

        // Attempt 1 re-runs maps 1 and 2 only: the engine holds map 0's output.
        long attempt1 = ShuffleClient.stageKey(4, 1);
        assertThat(client.pushTargets(lifecycle.endpoint(), shuffle, attempt1, 3, 2).faroShuffle())
            .isEqualTo(first);

        // Rolled back before maps 1 and 2 ended: the engine dropped every output.
        engineHolds.set(0);
        long attempt2 = ShuffleClient.stageKey(4, 2);
        ShuffleId rerun =
            client.pushTargets(lifecycle.endpoint(), shuffle, attempt2, 3, 2).faroShuffle();
        assertThat(rerun).isNotEqualTo(first);
        for (int map = 0; map < 3; map++) {
          assertThat(
                  client.mapperEnd(
                      lifecycle.endpoint(),
                      shuffle,
                      attempt2,
                      new MapAttempt(map, 2 << 16 | map),
                      3,
                      new int[0]))
              .as("map %d's winner is the re-run's attempt", map)
              .isEqualTo(2 << 16 | map);
        }
        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, 3, 2);
        assertThat(groups.faroShuffle()).isEqualTo(rerun);
        assertThat(groups.lost(0)).isFalse();
        // Attempt 1's zombie of map 1 ends late: the dropped generation never commits.
        assertThatThrownBy(
                () ->
                    client.mapperEnd(
                        lifecycle.endpoint(),
                        shuffle,
                        attempt1,
                        new MapAttempt(1, 1 << 16),
                        3,
                        new int[0]))
            .isInstanceOf(FaroException.class);
      }
    }
  }

  @Test
  void aStageAttemptThatEndsWithoutSomeMapsLosesItsGenerationInsteadOfStallingItsReaders()
      throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 1)) {
      // Were the readers left waiting for a commit that cannot come, they would fail after this.
      ClientSettings settings =
          ClientSettings.from(cluster.clientConf().with("faro.client.commit.timeout", "60s"));
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("zombie-output"), settings, pool, "127.0.0.1")) {
        List<Integer> lostShuffles = Collections.synchronizedList(new ArrayList<>());
        lifecycle.onShuffleLost(lostShuffles::add);
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 9);
        long attempt0 = ShuffleClient.stageKey(3, 0);
        ShuffleId first =
            client.pushTargets(lifecycle.endpoint(), shuffle, attempt0, 3, 2).faroShuffle();
        for (int map = 0; map < 3; map++) {
          client.mapperEnd(
              lifecycle.endpoint(), shuffle, attempt0, new MapAttempt(map, 0), 3, new int[0]);
        }
        // A stage attempt that ended with every map is no news.
        lifecycle.stageAttemptEnded(3, 0);
        assertThat(lostShuffles).isEmpty();
        assertThat(client.fileGroups(lifecycle.endpoint(), shuffle, 3, 1).lost(0)).isFalse();

        client.reportLost(lifecycle.endpoint(), first, 0, "test");
        // The re-run runs maps 0 and 1 only: the engine kept map 2's output, registered by a
        // zombie of attempt 0 after it had forgotten the others.
        long attempt1 = ShuffleClient.stageKey(3, 1);
        ShuffleId second =
            client.pushTargets(lifecycle.endpoint(), shuffle, attempt1, 3, 2).faroShuffle();
        assertThat(second).isNotEqualTo(first);
        client.mapperEnd(
            lifecycle.endpoint(), shuffle, attempt1, new MapAttempt(0, 1 << 16), 3, new int[0]);
        client.mapperEnd(
            lifecycle.endpoint(), shuffle, attempt1, new MapAttempt(1, 1 << 16), 3, new int[0]);

        lifecycle.stageAttemptEnded(3, 1);

        assertThat(lostShuffles)
            .as("the engine forgets the map outputs again")
            .containsExactly(9, 9);
        long start = System.nanoTime();
        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, 3, 2);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .as("answered, not timed out")
            .isLessThan(Duration.ofSeconds(30));
        assertThat(groups.faroShuffle()).isEqualTo(second);
        assertThat(groups.lost(0)).isTrue();
        assertThat(groups.lost(1)).isTrue();
        // The next attempt runs every map into a generation of its own.
        assertThat(
                client
                    .pushTargets(lifecycle.endpoint(), shuffle, ShuffleClient.stageKey(3, 2), 3, 2)
                    .faroShuffle())
            .isNotIn(first, second);
      }
    }
  }
}
