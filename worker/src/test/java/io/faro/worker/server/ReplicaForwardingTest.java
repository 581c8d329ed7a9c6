package io.faro.worker.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushStatusP;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A primary and its replica on two real workers: what the replica says reaches the client. */
class ReplicaForwardingTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-forward"), 0);

  @TempDir Path tmp;

  @Test
  void aReplicaWhoseDiskFillsUpMovesTheClientOnThroughItsPrimary() {
    try (FakeMaster master = new FakeMaster();
        WorkerServer primary =
            new WorkerServer(TestWorkers.conf(master.endpoint(), tmp.resolve("p")));
        // The replica's one disk may hold 64k and must keep 32k usable: full after about 32k.
        WorkerServer replica =
            new WorkerServer(
                TestWorkers.conf(master.endpoint(), tmp.resolve("r"))
                    .with("faro.worker.dirs", tmp.resolve("r") + ":ssd:64k")
                    .with("faro.worker.tier.ssd.reserve", "32k"))) {
      primary.start();
      replica.start();
      byte[] batch = new Batches(false, 5).batchBytes(0, 0, 0, 1000);
      try (WorkerClient toPrimary = new WorkerClient("to-primary", primary.endpoint());
          WorkerClient toReplica = new WorkerClient("to-replica", replica.endpoint())) {
        toReplica.reserve(SHUFFLE, 0, 0, 0);
        toPrimary.reserveWithReplica(SHUFFLE, 0, replica.endpoint(), 0);

        // The primary's disk has room; the replica's fills (8k flushes): its split must reach the
        // client.
        PushStatusP answer = PushStatusP.OK;
        int pushes = 0;
        while (answer == PushStatusP.OK && pushes < 500) {
          answer = toPrimary.push(SHUFFLE, List.of(new Part(0, 0, batch))).get(0);
          pushes++;
        }
        assertThat(answer)
            .as("after %d pushes of %d bytes", pushes, batch.length)
            .isEqualTo(PushStatusP.SOFT_SPLIT);
        assertThat((long) pushes * batch.length)
            .as("bytes pushed before the split")
            .isLessThan(64 * 1024);
      }
    }
  }

  @Test
  void aReplicaThatRefusedAForwardedPartRefusesTheNextOnesEvenOnceItsDiskRecovered()
      throws Exception {
    Path disk = tmp.resolve("r");
    try (FakeMaster master = new FakeMaster();
        WorkerServer replica =
            new WorkerServer(
                TestWorkers.conf(master.endpoint(), disk)
                    .with("faro.worker.disk.check.interval", "50ms"))) {
      replica.start();
      Batches batches = new Batches(false, 5);
      try (WorkerClient primary = new WorkerClient("as-primary", replica.endpoint())) {
        primary.reserve(SHUFFLE, 0, 0, 0, 1);
        assertThat(forward(primary, 0, batches.batchBytes(0, 0, 0, 500))).isEqualTo(PushStatusP.OK);

        // The disk breaks for a moment: the forwarded part k is refused.
        Path aside = tmp.resolve("r-aside");
        Files.move(disk, aside);
        Files.writeString(disk, "not a directory");
        Eventually.await(
            "the disk to be found broken",
            () -> primary.status().getDiskHealth(0),
            h -> h.startsWith("broken"));
        assertThat(forward(primary, 0, batches.batchBytes(0, 0, 1, 500)))
            .isEqualTo(PushStatusP.SPLIT);
        Files.delete(disk);
        Files.move(aside, disk);
        Eventually.await(
            "the disk to recover",
            () -> primary.status().getDiskHealth(0),
            h -> h.equals("healthy"));

        // Part k+1 would land right after part k-1: a hole. Refused, as every later part.
        assertThat(forward(primary, 0, batches.batchBytes(0, 0, 2, 500)))
            .isEqualTo(PushStatusP.SPLIT);
        // Partition 1 refused nothing: it takes data again.
        assertThat(forward(primary, 1, batches.batchBytes(0, 0, 3, 500))).isEqualTo(PushStatusP.OK);
      }
    }
  }

  @Test
  void aPrimaryWhoseReplicaRefusedAPartConfirmsNoLaterPartOfThatPartition() throws Exception {
    Path replicaDisk = tmp.resolve("r");
    try (FakeMaster master = new FakeMaster();
        WorkerServer primary =
            new WorkerServer(TestWorkers.conf(master.endpoint(), tmp.resolve("p")));
        WorkerServer replica =
            new WorkerServer(
                TestWorkers.conf(master.endpoint(), replicaDisk)
                    .with("faro.worker.disk.check.interval", "50ms"))) {
      primary.start();
      replica.start();
      Batches batches = new Batches(false, 5);
      try (WorkerClient toPrimary = new WorkerClient("to-primary", primary.endpoint());
          WorkerClient toReplica = new WorkerClient("to-replica", replica.endpoint())) {
        toReplica.reserve(SHUFFLE, 0, 0, 0, 1);
        toPrimary.reserveWithReplica(SHUFFLE, 0, replica.endpoint(), 0, 1);
        assertThat(
                toPrimary.push(SHUFFLE, List.of(new Part(0, 0, batches.batchBytes(0, 0, 0, 500)))))
            .containsExactly(PushStatusP.OK);

        // The replica's disk breaks for a moment: the part forwarded then is refused there.
        Path aside = tmp.resolve("r-aside");
        Files.move(replicaDisk, aside);
        Files.writeString(replicaDisk, "not a directory");
        Eventually.await(
            "the replica's disk to be found broken",
            () -> toReplica.status().getDiskHealth(0),
            h -> h.startsWith("broken"));
        PushStatusP refused =
            toPrimary
                .push(SHUFFLE, List.of(new Part(0, 0, batches.batchBytes(0, 0, 1, 500))))
                .get(0);
        assertThat(refused)
            .as("a part only the primary holds is not acknowledged")
            .isEqualTo(PushStatusP.REPLICA_FAILED);
        Files.delete(replicaDisk);
        Files.move(aside, replicaDisk);
        Eventually.await(
            "the replica's disk to recover",
            () -> toReplica.status().getDiskHealth(0),
            h -> h.equals("healthy"));

        // The primary itself no longer takes data for partition 0 (SPLIT, without asking the
        // replica, whose own refusal would answer REPLICA_FAILED): the client moves it to a new
        // epoch rather than the two copies differing from the refused part on.
        PushStatusP later =
            toPrimary
                .push(SHUFFLE, List.of(new Part(0, 0, batches.batchBytes(0, 0, 2, 500))))
                .get(0);
        assertThat(later).isEqualTo(PushStatusP.SPLIT);
        // Partition 1 lost nothing: both copies take it.
        assertThat(
                toPrimary.push(SHUFFLE, List.of(new Part(1, 0, batches.batchBytes(0, 0, 3, 500)))))
            .containsExactly(PushStatusP.OK);
      }
    }
  }

  @Test
  void aForwardConnectionTheReplicaClosedWhileIdleIsOpenedAgainNotFailed() throws Exception {
    try (FakeMaster master = new FakeMaster();
        WorkerServer primary =
            new WorkerServer(TestWorkers.conf(master.endpoint(), tmp.resolve("p")));
        WorkerServer replica =
            new WorkerServer(
                TestWorkers.conf(master.endpoint(), tmp.resolve("r"))
                    .with("faro.network.idle.timeout", "1s"))) {
      primary.start();
      replica.start();
      Batches batches = new Batches(false, 5);
      try (WorkerClient toPrimary = new WorkerClient("to-primary", primary.endpoint());
          WorkerClient toReplica = new WorkerClient("to-replica", replica.endpoint())) {
        toReplica.reserve(SHUFFLE, 0, 0, 0);
        toPrimary.reserveWithReplica(SHUFFLE, 0, replica.endpoint(), 0);
        assertThat(
                toPrimary.push(SHUFFLE, List.of(new Part(0, 0, batches.batchBytes(0, 0, 0, 500)))))
            .containsExactly(PushStatusP.OK);

        // Nothing to observe from outside: the replica closes the idle forward connection after 1s.
        Thread.sleep(2_500);

        assertThat(
                toPrimary.push(SHUFFLE, List.of(new Part(0, 0, batches.batchBytes(0, 0, 1, 500)))))
            .as("the link connects again: nothing was in flight, nothing is missing on the replica")
            .containsExactly(PushStatusP.OK);
      }
    }
  }

  /** Sends one part as a primary forwards it (a replica frame) and returns the answer. */
  private static PushStatusP forward(WorkerClient client, int partition, byte[] part) {
    PushRequest request =
        PushRequest.newBuilder()
            .setShuffle(WorkerClient.key(SHUFFLE))
            .setReplica(true)
            .setChunkSize(16 * 1024)
            .addParts(
                PushPart.newBuilder().setPartitionId(partition).setEpoch(0).setLength(part.length))
            .build();
    return WorkerClient.await(client.pushRaw(request, Unpooled.wrappedBuffer(part)), "forward")
        .getStatuses(0);
  }
}
