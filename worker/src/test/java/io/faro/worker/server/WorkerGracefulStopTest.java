package io.faro.worker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.CommittedPartitionP;
import io.faro.proto.PushStatusP;
import io.faro.proto.WorkerStateP;
import io.faro.worker.lifecycle.WorkerLifecycle;
import io.faro.worker.partition.SealReport;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker that leaves gracefully costs its shuffles nothing: what it acknowledged before a
 * graceful stop is sealed and recorded, and the restarted worker answers the shuffle's commit with
 * it; a decommissioned worker splits its partitions away, serves until its shuffles are gone, and
 * asks to exit. Real workers, a real RocksDB store, real files; the master is a fake that records
 * heartbeats.
 */
class WorkerGracefulStopTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-graceful"), 3);
  private static final long OWNER = 0x5eed_f00dL;

  @TempDir java.nio.file.Path tmp;

  private FaroConf conf(FakeMaster master) {
    return TestWorkers.conf(master.endpoint(), tmp.resolve("d0"), tmp.resolve("d1"))
        .with("faro.worker.id", "worker-graceful");
  }

  /** Pushes batch {@code batch} of map 0 to (partition, epoch); returns its status and bytes. */
  private static PushStatusP push(
      WorkerClient client, Batches batches, int partition, int epoch, int batch, byte[][] sent) {
    byte[] bytes = batches.batchBytes(0, 0, batch, 3000);
    if (sent != null) {
      sent[batch] = bytes;
    }
    return client.push(SHUFFLE, List.of(new Part(partition, epoch, bytes))).get(0);
  }

  private static byte[] concat(byte[][] parts, int from, int to) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = from; i < to; i++) {
      out.writeBytes(parts[i]);
    }
    return out.toByteArray();
  }

  private static String committed(CommitFilesResponse response) {
    return response.getCommittedList().stream()
        .map(CommittedPartitionP::getPartitionId)
        .sorted()
        .map(String::valueOf)
        .collect(Collectors.joining(","));
  }

  private static void reserve(WorkerClient client, int epoch, int disk, int... partitions) {
    WorkerClient.await(client.reserveAsync(SHUFFLE, OWNER, epoch, disk, partitions), "reserve");
  }

  @Test
  void whatWasAcknowledgedBeforeAGracefulStopIsCommittedAfterTheRestart() {
    Batches batches = new Batches(true, 11);
    byte[][] sent = new byte[20][];
    try (FakeMaster master = new FakeMaster()) {
      try (WorkerServer worker = new WorkerServer(conf(master))) {
        worker.start();
        try (WorkerClient client = new WorkerClient("before", worker.endpoint())) {
          reserve(client, 0, 0, 0, 2); // partition 2 stays empty
          reserve(client, 0, 1, 1);
          for (int b = 0; b < 10; b++) {
            assertThat(push(client, batches, b % 2, 0, b, sent)).isEqualTo(PushStatusP.OK);
          }

          SealReport sealed = worker.stopGracefully();

          assertThat(sealed).isEqualTo(new SealReport(3, 1, 0));
          assertThat(worker.state()).isEqualTo(WorkerLifecycle.State.STOPPING);
          // The masters heard of the stop before anything was sealed.
          assertThat(master.lastHeartbeat("worker-graceful").getState())
              .isEqualTo(WorkerStateP.STOPPING);
          // Until it closes: later pushes move to a new location, nothing new is reserved.
          assertThat(push(client, batches, 0, 0, 10, null)).isEqualTo(PushStatusP.SPLIT);
          // Partition 2 received nothing: sealed empty, its first part moves on too.
          assertThat(push(client, batches, 2, 0, 11, null)).isEqualTo(PushStatusP.SPLIT);
          assertThatThrownBy(() -> reserve(client, 1, 0, 0))
              .isInstanceOfSatisfying(
                  FaroException.class,
                  e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SHUTTING_DOWN);
                    assertThat(e.retryable()).isTrue();
                  });
          // A second stop (the process's, after an operator's) seals nothing more.
          assertThat(worker.stopGracefully()).isSameAs(sealed);
        }
      }

      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("after", again.endpoint())) {
          PartitionKey first = new PartitionKey(SHUFFLE, 0, 0);
          // Sealed is not committed: no reads yet, pushes to it move on, new locations are taken.
          assertThatThrownBy(() -> client.fetchAll(first))
              .isInstanceOfSatisfying(
                  FaroException.class,
                  e -> assertThat(e.code()).isEqualTo(ErrorCode.SHUFFLE_NOT_COMMITTED));
          assertThat(push(client, batches, 0, 0, 12, null)).isEqualTo(PushStatusP.SPLIT);
          assertThat(push(client, batches, 2, 0, 13, null))
              .as("sealed empty by the earlier run")
              .isEqualTo(PushStatusP.SPLIT);
          reserve(client, 1, 0, 0);
          for (int b = 14; b < 17; b++) {
            assertThat(push(client, batches, 0, 1, b, sent)).isEqualTo(PushStatusP.OK);
          }
          assertThatThrownBy(
                  () ->
                      WorkerClient.await(
                          client.commitAsync(SHUFFLE, OWNER + 1), "a commit of another owner"))
              .isInstanceOfSatisfying(
                  FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_OWNER));

          CommitFilesResponse commit =
              WorkerClient.await(client.commitAsync(SHUFFLE, OWNER), "commit");

          // Partitions 0 (epochs 0 and 1), 1 and 2 (empty, but committed: not lost).
          assertThat(committed(commit)).isEqualTo("0,0,1,2");
          ByteArrayOutputStream even = new ByteArrayOutputStream();
          ByteArrayOutputStream odd = new ByteArrayOutputStream();
          for (int b = 0; b < 10; b++) {
            (b % 2 == 0 ? even : odd).writeBytes(sent[b]);
          }
          assertThat(client.fetchAll(first)).isEqualTo(even.toByteArray());
          assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 1, 0))).isEqualTo(odd.toByteArray());
          assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 1)))
              .isEqualTo(concat(sent, 14, 17));
          // Committed now: a late push is from a losing attempt.
          assertThat(push(client, batches, 0, 0, 18, null)).isEqualTo(PushStatusP.STAGE_ENDED);
        }
      }

      // The commit was recorded whole: a third run serves it without being asked again.
      try (WorkerServer third = new WorkerServer(conf(master))) {
        third.start();
        try (WorkerClient client = new WorkerClient("third", third.endpoint())) {
          assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 1)))
              .isEqualTo(concat(sent, 14, 17));
        }
      }
    }
  }

  @Test
  void aCommitThatArrivesWhileTheWorkerStopsIsAnsweredWithTheSealedFiles() {
    Batches batches = new Batches(false, 5);
    byte[][] sent = new byte[4][];
    try (FakeMaster master = new FakeMaster()) {
      try (WorkerServer worker = new WorkerServer(conf(master))) {
        worker.start();
        try (WorkerClient client = new WorkerClient("stopping", worker.endpoint())) {
          reserve(client, 0, 0, 0);
          for (int b = 0; b < 4; b++) {
            assertThat(push(client, batches, 0, 0, b, sent)).isEqualTo(PushStatusP.OK);
          }
          worker.stopGracefully();
          CommitFilesResponse commit =
              WorkerClient.await(client.commitAsync(SHUFFLE, OWNER), "commit");
          assertThat(committed(commit)).isEqualTo("0");
          assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 0)))
              .isEqualTo(concat(sent, 0, 4));
        }
      }
      // Recorded as committed, not as sealed: served at once after the restart.
      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("after", again.endpoint())) {
          assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 0)))
              .isEqualTo(concat(sent, 0, 4));
        }
      }
    }
  }

  @Test
  void aGracefulTimeoutOfZeroSealsNothing() {
    try (FakeMaster master = new FakeMaster();
        WorkerServer worker =
            new WorkerServer(conf(master).with("faro.worker.graceful.timeout", "0s"))) {
      worker.start();
      try (WorkerClient client = new WorkerClient("no-seal", worker.endpoint())) {
        reserve(client, 0, 0, 0);
        assertThat(push(client, new Batches(false, 1), 0, 0, 0, null)).isEqualTo(PushStatusP.OK);
        assertThat(worker.stopGracefully()).isEqualTo(new SealReport(0, 0, 0));
        assertThat(worker.state()).isEqualTo(WorkerLifecycle.State.SERVING);
      }
    }
  }

  @Test
  void aDecommissionedWorkerSplitsItsPartitionsAwayServesUntilItsShufflesAreGoneThenAsksToExit()
      throws InterruptedException {
    Batches batches = new Batches(true, 3);
    byte[][] sent = new byte[6][];
    try (FakeMaster master = new FakeMaster();
        WorkerServer worker = new WorkerServer(conf(master))) {
      CountDownLatch exitAsked = new CountDownLatch(1);
      worker.onExitRequest(exitAsked::countDown);
      worker.start();
      try (WorkerClient client = new WorkerClient("drain", worker.endpoint())) {
        reserve(client, 0, 0, 0);
        for (int b = 0; b < 3; b++) {
          assertThat(push(client, batches, 0, 0, b, sent)).isEqualTo(PushStatusP.OK);
        }

        master.decommission(true);
        Eventually.await(
            "the worker reports it drains",
            () ->
                master.lastHeartbeat("worker-graceful").getState() == WorkerStateP.DRAINING
                    && push(client, batches, 0, 0, 3, null) == PushStatusP.SPLIT);
        assertThatThrownBy(() -> reserve(client, 1, 0, 0))
            .isInstanceOfSatisfying(
                FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SHUTTING_DOWN));
        // Cancelled (include-worker): it takes slots again, and its sealed partition stays split.
        master.decommission(false);
        Eventually.await(
            "the worker reports it serves again",
            () -> master.lastHeartbeat("worker-graceful").getState() == WorkerStateP.SERVING);
        reserve(client, 1, 0, 0);
        assertThat(push(client, batches, 0, 1, 4, sent)).isEqualTo(PushStatusP.OK);
        assertThat(push(client, batches, 0, 0, 5, null)).isEqualTo(PushStatusP.SPLIT);

        master.decommission(true);
        Eventually.await(
            "the worker drains again",
            () -> master.lastHeartbeat("worker-graceful").getState() == WorkerStateP.DRAINING);
        // It still serves what it holds: the shuffle commits and is read.
        CommitFilesResponse commit =
            WorkerClient.await(client.commitAsync(SHUFFLE, OWNER), "commit");
        assertThat(committed(commit)).isEqualTo("0,0");
        assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 0))).isEqualTo(concat(sent, 0, 3));
        assertThat(exitAsked.await(1, TimeUnit.SECONDS))
            .as("no exit while a shuffle is held")
            .isFalse();

        master.expire(SHUFFLE);
        assertThat(exitAsked.await(10, TimeUnit.SECONDS)).as("exit asked once drained").isTrue();
        assertThat(worker.state()).isEqualTo(WorkerLifecycle.State.DRAINED);
        assertThat(master.lastHeartbeat("worker-graceful").getState())
            .isEqualTo(WorkerStateP.DRAINED);
      }
    }
  }
}
