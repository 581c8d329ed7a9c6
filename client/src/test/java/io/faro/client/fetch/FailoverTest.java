package io.faro.client.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientSettings;
import io.faro.client.ReadRange;
import io.faro.client.protocol.ExecutorProto;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.RemoteException;
import io.faro.proto.CommittedFileP;
import io.faro.proto.ErrorResponse;
import io.faro.proto.GetReducerFileGroupsResponse;
import java.net.ConnectException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where a reader goes on after a failed chunk, for an epoch with a primary and a replica and one
 * retry per copy, without a worker: the failures are handed to it as a fetch would meet them.
 */
class FailoverTest {
  private ClientPool pool;
  private EpochGroup group;
  private Failover failover;

  private static ClientSettings settings(String restartWait) {
    return ClientSettings.from(
        FaroConf.of(
            Map.of(
                "faro.client.fetch.retries", "1",
                "faro.client.fetch.retry.wait", "1ms",
                "faro.client.worker.restart.wait", restartWait,
                "faro.auth.enabled", "false")));
  }

  private void start(String restartWait) {
    if (pool != null) {
      pool.close();
    }
    ClientSettings settings = settings(restartWait);
    pool = new ClientPool("failover-test", settings.network());
    GetReducerFileGroupsResponse.Builder answer =
        GetReducerFileGroupsResponse.newBuilder()
            .setFaroShuffleId(0)
            .setStartPartition(0)
            .setEndPartition(1)
            .addWinningAttempts(0)
            .addExpectedBatches(0);
    for (Role role : List.of(Role.PRIMARY, Role.REPLICA)) {
      // Nothing listens there: the test hands the failures in itself.
      WorkerEndpoint endpoint = new WorkerEndpoint("127.0.0.1", 1, 1, 1);
      PartitionLocation location =
          new PartitionLocation(0, 0, role, new WorkerId(role.name()), endpoint, 0);
      answer.addFiles(
          CommittedFileP.newBuilder()
              .setLocation(IdMapper.toProto(location))
              .setBytes(300)
              .setChunks(3));
    }
    ReducerFileGroups groups = ExecutorProto.fileGroups(new AppId("failover"), answer.build());
    group = new EpochGroup(0, List.copyOf(groups.files(0)));
    ChunkPrefetch chunks =
        new ChunkPrefetch(
            groups.faroShuffle(),
            List.of(group),
            new BatchFilter(groups, new ReadRange(0, 1, 0, 1)),
            pool,
            settings);
    failover = new Failover(groups.faroShuffle(), chunks, settings);
  }

  @BeforeEach
  void startDefault() {
    start("0s");
  }

  @AfterEach
  void stop() {
    pool.close();
  }

  private ChunkRef chunk(int index) {
    return new ChunkRef(group, group.file(), index);
  }

  private static FaroException timeout() {
    return new FaroException(ErrorCode.TIMEOUT, "no answer in time");
  }

  private static FaroException refused() {
    return new FaroException(
        ErrorCode.CONNECTION_FAILED, "cannot connect", new ConnectException("refused"));
  }

  private static FaroException busy() {
    return new RemoteException(
        new HostPort("127.0.0.1", 1),
        ErrorResponse.newBuilder()
            .setCode(ErrorCode.TIMEOUT.toProto())
            .setMessage("every read buffer is in use")
            .build());
  }

  @Test
  void eachCopyIsAskedAgainOnceThenTheOtherThenTheDataIsLost() {
    failover.recover(chunk(1), timeout());
    assertThat(group.copy).as("asked again on the primary").isZero();
    failover.recover(chunk(1), timeout());
    assertThat(group.copy).as("on to the replica").isEqualTo(1);
    failover.recover(chunk(1), timeout());
    assertThat(group.copy).isEqualTo(1);
    assertThatThrownBy(() -> failover.recover(chunk(1), timeout()))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATA_LOST))
        .hasMessageContaining("partition 0 of shuffle")
        .hasMessageContaining("every copy failed 2 times");
    assertThat(failover.fetchRetries()).isEqualTo(4);
  }

  @Test
  void aChunkReadWholeStartsTheNextOneWithNoFailure() {
    failover.recover(chunk(0), timeout());
    failover.chunkRead();
    failover.recover(chunk(1), timeout());
    assertThat(group.copy).as("the first failure of chunk 1 is retried in place").isZero();
  }

  @Test
  void aCopyWhoseWorkerRefusesIsLeftAtOnceAndTheLastIsWaitedForUntilTheRestartWait()
      throws Exception {
    start("1s");
    failover.recover(chunk(0), refused());
    assertThat(group.copy).as("left at once for the replica").isEqualTo(1);
    long start = System.nanoTime();
    // The replica is the last copy: its worker may be restarting, so it is asked again and again,
    // without counting, until the wait has passed; then its refusals count as any failure.
    while (System.nanoTime() - start < 300_000_000L) {
      failover.recover(chunk(0), refused());
      assertThat(group.copy).isEqualTo(1);
    }
    // A deadline, not a condition: the restart wait (1 s from the first refusal) must pass, and
    // nothing but time ends it.
    Thread.sleep(1_000);
    failover.recover(chunk(0), refused());
    assertThat(group.copy).as("asked again once, as after any failure").isEqualTo(1);
    assertThatThrownBy(() -> failover.recover(chunk(0), refused()))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATA_LOST));
  }

  @Test
  void aBusyWorkerIsAskedAgainWithoutCountingUntilItsBusyAnswersRunOut() {
    // Ten busy answers per configured retry do not count against the copy.
    for (int i = 0; i < 10; i++) {
      failover.recover(chunk(2), busy());
    }
    assertThat(group.copy).isZero();
    // Then a busy copy counts as failing: asked once again, then left.
    failover.recover(chunk(2), busy());
    assertThat(group.copy).isZero();
    failover.recover(chunk(2), busy());
    assertThat(group.copy).isEqualTo(1);
    assertThat(failover.fetchRetries()).isEqualTo(12);
  }
}
