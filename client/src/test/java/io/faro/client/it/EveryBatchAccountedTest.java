package io.faro.client.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.MapAttempt;
import io.faro.client.ReadRange;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.batch.Batch;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.CommitFilesResponse;
import io.faro.worker.server.WorkerServer;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every acknowledged batch is accounted for: a map's mapper end reports how many batches it pushed
 * per partition, and a reader that reads fewer fails with DATA_LOST (the engine re-runs the map
 * stage) instead of returning a wrong answer. A commit that does not come from the shuffle's
 * lifecycle manager ends nothing, and an attempt whose batches meet a committed shuffle fails
 * instead of succeeding.
 */
class EveryBatchAccountedTest {
  @TempDir Path dir;

  /** A cluster of real workers and an app's lifecycle manager and executor client on it. */
  private record App(
      MiniFaroCluster cluster, ClientPool pool, LifecycleManager lifecycle, ShuffleClient client)
      implements AutoCloseable {
    /** {@code conf}: more client settings, key then value. */
    static App start(Path dir, int workers, String app, String... conf) throws Exception {
      MiniFaroCluster cluster = MiniFaroCluster.start(dir, workers);
      io.faro.common.config.FaroConf clientConf =
          cluster.clientConf().with("faro.client.push.batch.size", "2k");
      for (int i = 0; i + 1 < conf.length; i += 2) {
        clientConf = clientConf.with(conf[i], conf[i + 1]);
      }
      ClientSettings settings = ClientSettings.from(clientConf);
      ClientPool pool = new ClientPool("test", settings.network());
      LifecycleManager lifecycle =
          new LifecycleManager(new AppId(app), settings, pool, "127.0.0.1");
      return new App(cluster, pool, lifecycle, new ShuffleClient(pool, settings));
    }

    @Override
    public void close() {
      lifecycle.close();
      pool.close();
      cluster.close();
    }
  }

  /** What reading {@code reader} to its end throws (the count check comes after the last chunk). */
  private static FaroException readToTheEnd(PartitionReader reader) {
    return (FaroException)
        catchThrowable(
            () -> {
              while (reader.next() != null) {
                // read on
              }
            });
  }

  private static int[] push(
      ShuffleClient client,
      LifecycleManager lifecycle,
      EngineShuffleId shuffle,
      ShuffleWorkload workload,
      int mapId,
      int attemptId) {
    try (MapPusher pusher =
        client.newMapPusher(
            lifecycle.endpoint(), shuffle, mapId, attemptId, workload.maps, workload.partitions)) {
      workload.writeMap(pusher, mapId, 0);
      pusher.finish();
      return pusher.batchCounts();
    }
  }

  @Test
  void aBatchMissingFromTheFilesFailsItsPartitionsReadWithDataLost() throws Exception {
    try (App app = App.start(dir, 1, "missing-batch")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(2, 4, 400, 5L);
      int[] map0 = push(client, lifecycle, shuffle, workload, 0, 0);
      int[] map1 = push(client, lifecycle, shuffle, workload, 1, 0);
      assertThat(map1[2]).isPositive();
      // As if one more batch of partition 2 had been acknowledged and then lost on the worker.
      map1[2]++;
      client.mapperEnd(lifecycle.endpoint(), shuffle, 0, 0, 2, map0);
      client.mapperEnd(lifecycle.endpoint(), shuffle, 1, 0, 2, map1);

      int[][] seen = new int[2][400];
      for (int p : new int[] {0, 1, 3}) {
        try (PartitionReader reader =
            client.newReader(lifecycle.endpoint(), shuffle, 2, new ReadRange(p, p + 1, 0, 2), 0)) {
          for (Batch b; (b = reader.next()) != null; ) {
            workload.countBatch(b, p, seen);
          }
        }
      }
      try (PartitionReader reader =
          client.newReader(lifecycle.endpoint(), shuffle, 2, new ReadRange(2, 3, 0, 2), 0)) {
        FaroException missing = readToTheEnd(reader);
        assertThat(missing).isNotNull();
        assertThat(missing.code()).isEqualTo(ErrorCode.DATA_LOST);
        assertThat(missing)
            .hasMessageContaining("partition 2")
            .hasMessageContaining(
                "pushed " + (map0[2] + map1[2]) + " batches but " + (map0[2] + map1[2] - 1));
        assertThat(reader.currentPartition()).isEqualTo(2);
      }
      int[] partitionOf0 = workload.partitionsOf(0);
      for (int s = 0; s < 400; s++) {
        assertThat(seen[0][s]).isEqualTo(partitionOf0[s] == 2 ? 0 : 1);
      }
    }
  }

  /**
   * The skew path (a reader of some maps of a partition, as Spark's skew-join split and its local
   * reader read) checks its batches too: the driver counts what the winners of its maps pushed.
   */
  @Test
  void aBatchMissingFromAMapRangeFailsThatRangesReadWithDataLost() throws Exception {
    try (App app = App.start(dir, 1, "missing-skew-batch")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(3, 4, 400, 5L);
      int[][] pushed = new int[3][];
      for (int m = 0; m < 3; m++) {
        pushed[m] = push(client, lifecycle, shuffle, workload, m, 0);
      }
      assertThat(pushed[1][2]).isPositive();
      // As if one more batch of map 1 for partition 2 had been acknowledged and then lost.
      pushed[1][2]++;
      for (int m = 0; m < 3; m++) {
        client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, 3, pushed[m]);
      }

      // Maps 0 and 2 alone are whole; map 1's range is not.
      for (int[] range : new int[][] {{0, 1}, {2, 3}}) {
        try (PartitionReader reader =
            client.newReader(
                lifecycle.endpoint(), shuffle, 3, new ReadRange(2, 3, range[0], range[1]), 0)) {
          int batches = 0;
          while (reader.next() != null) {
            batches++;
          }
          assertThat(batches).isEqualTo(pushed[range[0]][2]);
        }
      }
      for (int[] range : new int[][] {{1, 2}, {0, 2}, {1, 3}}) {
        try (PartitionReader reader =
            client.newReader(
                lifecycle.endpoint(), shuffle, 3, new ReadRange(2, 3, range[0], range[1]), 0)) {
          FaroException missing = readToTheEnd(reader);
          assertThat(missing).as("maps %d..%d", range[0], range[1] - 1).isNotNull();
          assertThat(missing.code()).isEqualTo(ErrorCode.DATA_LOST);
          assertThat(missing)
              .hasMessageContaining("partition 2")
              .hasMessageContaining("(maps " + range[0] + ".." + (range[1] - 1) + ")");
        }
      }
    }
  }

  /**
   * A batch numbered at or beyond the batches its attempt declared is corrupt: a reader's seen-set
   * per map is bounded by the declared count, never by the largest id on the wire.
   */
  @Test
  void aBatchBeyondWhatItsAttemptDeclaredIsRefused() throws Exception {
    try (App app = App.start(dir, 1, "undeclared-batch")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(1, 1, 400, 5L);
      int[] pushed = push(client, lifecycle, shuffle, workload, 0, 0);
      assertThat(pushed[0]).isGreaterThan(1);
      // It declares one batch fewer than it pushed: its last batch has an id no count covers.
      pushed[0]--;
      client.mapperEnd(lifecycle.endpoint(), shuffle, 0, 0, 1, pushed);
      try (PartitionReader reader =
          client.newReader(lifecycle.endpoint(), shuffle, 1, new ReadRange(0, 1, 0, 1), 0)) {
        FaroException refused = readToTheEnd(reader);
        assertThat(refused).isNotNull();
        assertThat(refused.code()).isEqualTo(ErrorCode.DATA_LOST);
        assertThat(refused).hasStackTraceContaining("batches, numbered from 0");
      }
    }
  }

  @Test
  void aStrayCommitWhileMapsPushEndsNothingAndEveryRecordIsRead() throws Exception {
    try (App app = App.start(dir, 2, "stray-commit")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(3, 8, 500, 6L);
      int[][] batches = new int[3][];
      batches[0] = push(client, lifecycle, shuffle, workload, 0, 0);

      // Anyone who knows the app id can send this; it names the very shuffle being written (the
      // engine shuffle's first generation).
      ShuffleId written = new ShuffleId(lifecycle.app(), 0);
      for (WorkerServer worker : app.cluster().workers()) {
        HostPort rpc = worker.endpoint().rpc();
        Throwable refused =
            catchThrowable(
                () ->
                    Futures.await(
                        app.pool()
                            .call(
                                rpc,
                                CommitFilesRequest.newBuilder()
                                    .setShuffle(IdMapper.toProto(written))
                                    .build(),
                                CommitFilesResponse.class),
                        Duration.ofSeconds(10),
                        "commit"));
        assertThat(refused)
            .isInstanceOfSatisfying(
                FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_OWNER));
      }

      batches[1] = push(client, lifecycle, shuffle, workload, 1, 0);
      batches[2] = push(client, lifecycle, shuffle, workload, 2, 0);
      for (int m = 0; m < 3; m++) {
        client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, 3, batches[m]);
      }
      ShuffleWorkload.assertEveryRecordOnce(
          workload.readAll(client, lifecycle.endpoint(), shuffle, r -> {}));
    }
  }

  @Test
  void anAttemptWhoseBatchesMeetACommittedShuffleNeverWins() throws Exception {
    try (App app = App.start(dir, 1, "late-attempt")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(1, 4, 300, 7L);
      int[] winner = push(client, lifecycle, shuffle, workload, 0, 0);
      client.mapperEnd(lifecycle.endpoint(), shuffle, 0, 0, 1, winner);
      client.fileGroups(lifecycle.endpoint(), shuffle, 1, 0); // the last map ended: committed

      // A copy of the map still pushing (speculative, or run again after an executor was lost):
      // its batches are in no file. It ends, and is told it lost.
      int[] late;
      boolean incomplete;
      try (MapPusher pusher = client.newMapPusher(lifecycle.endpoint(), shuffle, 0, 1, 1, 4)) {
        workload.writeMap(pusher, 0, 0);
        pusher.finish();
        late = pusher.batchCounts();
        incomplete = pusher.incomplete();
      }
      assertThat(incomplete).as("batches answered STAGE_ENDED").isTrue();
      assertThat(
              client.mapperEnd(
                  lifecycle.endpoint(), shuffle, 0, new MapAttempt(0, 1), 1, late, true))
          .isZero();
      ShuffleWorkload.assertEveryRecordOnce(
          workload.readAll(client, lifecycle.endpoint(), shuffle, r -> {}));
    }
  }

  @Test
  void aStageThatRunsAgainAfterItsGenerationCommittedWritesANewOne() throws Exception {
    try (App app = App.start(dir, 1, "rollback")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(2, 4, 300, 8L);
      ShuffleId first =
          writeStage(client, lifecycle, shuffle, workload, ShuffleClient.stageKey(3, 0));
      assertThat(
              client
                  .fileGroups(lifecycle.endpoint(), shuffle, 2, ShuffleClient.stageKey(4, 0))
                  .faroShuffle())
          .isEqualTo(first);

      // The engine rolled the stage back (its input is indeterminate) and runs it again, whole.
      ShuffleId second =
          writeStage(client, lifecycle, shuffle, workload, ShuffleClient.stageKey(3, 1));

      assertThat(second).isNotEqualTo(first);
      long reader = ShuffleClient.stageKey(4, 1);
      assertThat(client.fileGroups(lifecycle.endpoint(), shuffle, 2, reader).faroShuffle())
          .isEqualTo(second);
      int[][] seen = new int[2][300];
      for (int p = 0; p < 4; p++) {
        try (PartitionReader r =
            client.newReader(
                lifecycle.endpoint(), shuffle, 2, new ReadRange(p, p + 1, 0, 2), reader)) {
          for (Batch b; (b = r.next()) != null; ) {
            workload.countBatch(b, p, seen);
          }
        }
      }
      ShuffleWorkload.assertEveryRecordOnce(seen);
    }
  }

  /**
   * Runs every map of {@code workload} in stage attempt {@code stage}; returns the generation
   * written.
   */
  @Test
  void aReadingStageAttemptReadsEveryPageFromTheGenerationItFirstRead() throws Exception {
    // Pages of 2 partitions: the 4 partitions are 2 pages, asked for one at a time.
    try (App app = App.start(dir, 1, "pinned", "faro.client.partitions.per.page", "2")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(2, 4, 300, 8L);
      ShuffleId first =
          writeStage(client, lifecycle, shuffle, workload, ShuffleClient.stageKey(3, 0));
      long reader = ShuffleClient.stageKey(4, 0);
      assertThat(client.fileGroups(lifecycle.endpoint(), shuffle, 2, reader, 0, 2).faroShuffle())
          .isEqualTo(first);

      // A new generation commits while that reading stage attempt still runs (its tasks are
      // zombies, say): its next page still comes from the generation it read first.
      ShuffleId second =
          writeStage(client, lifecycle, shuffle, workload, ShuffleClient.stageKey(3, 1));
      assertThat(second).isNotEqualTo(first);
      assertThat(client.fileGroups(lifecycle.endpoint(), shuffle, 2, reader, 2, 4).faroShuffle())
          .isEqualTo(first);
      int[][] seen = new int[2][300];
      try (PartitionReader r =
          client.newReader(lifecycle.endpoint(), shuffle, 2, new ReadRange(0, 4, 0, 2), reader)) {
        assertThat(r.shuffle()).isEqualTo(first);
        for (Batch b; (b = r.next()) != null; ) {
          workload.countBatch(b, r.currentPartition(), seen);
        }
      }
      ShuffleWorkload.assertEveryRecordOnce(seen);

      // A new reading stage attempt reads the new generation, every page of it.
      assertThat(
              client
                  .fileGroups(lifecycle.endpoint(), shuffle, 2, ShuffleClient.stageKey(4, 1), 0, 4)
                  .faroShuffle())
          .isEqualTo(second);
    }
  }

  @Test
  void rangesOfPartitionsThatAreNotRangesOfTheShuffleAreRefused() throws Exception {
    try (App app = App.start(dir, 1, "ranges", "faro.client.partitions.per.page", "2")) {
      ShuffleClient client = app.client();
      LifecycleManager lifecycle = app.lifecycle();
      EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
      ShuffleWorkload workload = new ShuffleWorkload(2, 4, 50, 9L);
      ShuffleId written =
          writeStage(client, lifecycle, shuffle, workload, ShuffleClient.stageKey(3, 0));
      java.util.function.Function<io.faro.proto.GetPushLocationsRequest.Builder, Throwable> push =
          b ->
              org.assertj.core.api.Assertions.catchThrowable(
                  () ->
                      app.pool()
                          .call(
                              lifecycle.endpoint(),
                              b.setShuffleId(0)
                                  .setNumMaps(2)
                                  .setNumPartitions(4)
                                  .setStageId(3)
                                  .build(),
                              io.faro.proto.GetPushLocationsResponse.class)
                          .join());
      assertThat(
              push.apply(
                  io.faro.proto.GetPushLocationsRequest.newBuilder()
                      .setStartPartition(-1)
                      .setEndPartition(2)))
          .hasMessageContaining("not a range");
      assertThat(
              push.apply(
                  io.faro.proto.GetPushLocationsRequest.newBuilder()
                      .setStartPartition(3)
                      .setEndPartition(1)))
          .hasMessageContaining("not a range");
      assertThat(
              push.apply(
                  io.faro.proto.GetPushLocationsRequest.newBuilder()
                      .setStartPartition(4)
                      .setEndPartition(6)))
          .hasMessageContaining("not a range");

      java.util.function.Function<io.faro.proto.GetReducerFileGroupsRequest.Builder, Object> files =
          b -> {
            try {
              return app.pool()
                  .call(
                      lifecycle.endpoint(),
                      b.setShuffleId(0).setNumMaps(2).build(),
                      io.faro.proto.GetReducerFileGroupsResponse.class)
                  .join();
            } catch (RuntimeException e) {
              return e;
            }
          };
      assertThat(
              files.apply(
                  io.faro.proto.GetReducerFileGroupsRequest.newBuilder()
                      .setStartPartition(2)
                      .setEndPartition(1)))
          .asString()
          .contains("not a range");
      assertThat(
              files.apply(
                  io.faro.proto.GetReducerFileGroupsRequest.newBuilder()
                      .setStartPartition(4)
                      .setEndPartition(5)))
          .asString()
          .contains("has 4");
      // A generation that does not exist is refused; an end past the last partition is cut there.
      assertThat(
              files.apply(
                  io.faro.proto.GetReducerFileGroupsRequest.newBuilder()
                      .setShuffleId(0)
                      .setStartPartition(0)
                      .setEndPartition(1)
                      .setFaroShuffleId(written.shuffle() + 1)))
          .asString()
          .contains("UNKNOWN_SHUFFLE");
      Object whole =
          files.apply(
              io.faro.proto.GetReducerFileGroupsRequest.newBuilder()
                  .setStartPartition(3)
                  .setEndPartition(1000));
      assertThat(whole).isInstanceOf(io.faro.proto.GetReducerFileGroupsResponse.class);
      io.faro.proto.GetReducerFileGroupsResponse answer =
          (io.faro.proto.GetReducerFileGroupsResponse) whole;
      assertThat(answer.getStartPartition()).isEqualTo(3);
      assertThat(answer.getEndPartition()).isEqualTo(4);
      assertThat(answer.getExpectedBatchesCount()).isEqualTo(1);
      assertThat(answer.getFilesList())
          .allSatisfy(f -> assertThat(f.getLocation().getPartitionId()).isEqualTo(3));
    }
  }

  private static ShuffleId writeStage(
      ShuffleClient client,
      LifecycleManager lifecycle,
      EngineShuffleId shuffle,
      ShuffleWorkload workload,
      long stage) {
    ShuffleId written =
        client
            .pushTargets(lifecycle.endpoint(), shuffle, stage, workload.maps, workload.partitions)
            .faroShuffle();
    for (int m = 0; m < workload.maps; m++) {
      int[] batches;
      try (MapPusher pusher =
          client.newMapPusher(
              lifecycle.endpoint(),
              shuffle,
              stage,
              new MapAttempt(m, 0),
              workload.maps,
              workload.partitions)) {
        workload.writeMap(pusher, m, 0);
        pusher.finish();
        batches = pusher.batchCounts();
      }
      client.mapperEnd(
          lifecycle.endpoint(), shuffle, stage, new MapAttempt(m, 0), workload.maps, batches);
    }
    return written;
  }
}
