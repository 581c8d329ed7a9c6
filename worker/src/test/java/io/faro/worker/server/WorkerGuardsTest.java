package io.faro.worker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.Futures;
import io.faro.common.network.RemoteException;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.PushStatusP;
import io.faro.worker.WorkerOptions;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker refuses what does not belong: a commit or reservation from another owner than the
 * lifecycle manager that reserved the shuffle, and reservations beyond its limits, each with an
 * error answer that names why; the shuffle goes on untouched.
 */
class WorkerGuardsTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-guards"), 1);
  private static final long OWNER = 0x5eed_1234_abcdL;

  @TempDir Path tmp;
  private FakeMaster master;
  private WorkerServer worker;
  private WorkerClient client;
  private final Batches batches = new Batches(true, 3);

  @BeforeEach
  void setUp() {
    master = new FakeMaster();
    worker =
        new WorkerServer(
            TestWorkers.conf(master.endpoint(), tmp.resolve("disk0"))
                .with(WorkerOptions.RESERVE_MAX_LOCATIONS, "4")
                .with(WorkerOptions.MAX_PARTITIONS, "6"));
    worker.start();
    client = new WorkerClient("guards", worker.endpoint());
  }

  @AfterEach
  void tearDown() {
    client.close();
    worker.close();
    master.close();
  }

  private static RemoteException refused(CompletableFuture<?> answer) {
    Throwable error =
        catchThrowable(() -> Futures.await(answer, java.time.Duration.ofSeconds(10), "test"));
    Throwable cause = error;
    while (cause != null && !(cause instanceof RemoteException)) {
      cause = cause.getCause();
    }
    assertThat(cause).as("an error answer, got " + error).isInstanceOf(RemoteException.class);
    return (RemoteException) cause;
  }

  @Test
  void aStrayCommitIsRefusedAndPushesGoOn() {
    WorkerClient.await(client.reserveAsync(SHUFFLE, OWNER, 0, 0, 0, 1), "reserve");
    byte[] first = batches.batchBytes(0, 0, 0, 300);
    byte[] second = batches.batchBytes(0, 0, 1, 300);
    assertThat(client.push(SHUFFLE, List.of(new Part(0, 0, first))))
        .containsExactly(PushStatusP.OK);

    RemoteException noToken = refused(client.commitAsync(SHUFFLE, 0));
    RemoteException otherToken = refused(client.commitAsync(SHUFFLE, OWNER + 1));
    RemoteException otherReserve = refused(client.reserveAsync(SHUFFLE, OWNER + 1, 1, 0, 0));

    assertThat(List.of(noToken.code(), otherToken.code(), otherReserve.code()))
        .containsOnly(ErrorCode.NOT_OWNER);
    assertThat(noToken).hasMessageContaining(SHUFFLE.toString());
    // Nothing ended: the shuffle still takes pushes, and its owner commits both batches.
    assertThat(client.push(SHUFFLE, List.of(new Part(0, 0, second))))
        .containsExactly(PushStatusP.OK);
    CommitFilesResponse committed =
        WorkerClient.await(client.commitAsync(SHUFFLE, OWNER), "commit");
    assertThat(committed.getCommittedList())
        .filteredOn(c -> c.getPartitionId() == 0)
        .singleElement()
        .satisfies(c -> assertThat(c.getBytes()).isEqualTo(first.length + second.length));
    assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 0)))
        .hasSize(first.length + second.length);
  }

  @Test
  void reservationsBeyondTheLimitsAreRefusedWholeNamingTheKey() {
    RemoteException tooLarge = refused(client.reserveAsync(SHUFFLE, OWNER, 0, 0, 0, 1, 2, 3, 4));
    WorkerClient.await(client.reserveAsync(SHUFFLE, OWNER, 0, 0, 0, 1, 2, 3), "reserve");
    ShuffleId other = new ShuffleId(SHUFFLE.app(), 2);
    RemoteException tooMany = refused(client.reserveAsync(other, OWNER, 0, 0, 0, 1, 2));

    assertThat(tooLarge.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(tooLarge).hasMessageContaining("faro.worker.reserve.max.locations");
    assertThat(tooMany.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(tooMany).hasMessageContaining("faro.worker.max.partitions");
    // Refused whole: nothing of the second shuffle is here; two more locations still fit.
    byte[] batch = batches.batchBytes(0, 0, 0, 100);
    assertThat(client.push(other, List.of(new Part(0, 0, batch))))
        .containsExactly(PushStatusP.NOT_HERE);
    WorkerClient.await(
        client.reserveAsync(other, OWNER, 0, 0, IntStream.range(0, 2).toArray()), "reserve");
    assertThat(client.push(other, List.of(new Part(0, 0, batch)))).containsExactly(PushStatusP.OK);
  }
}
