package io.faro.worker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.testing.Eventually;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskStatusP;
import io.faro.proto.PushStatusP;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Starting, stopping, several workers per JVM, and back-pressure under a small memory budget. */
class WorkerLifecycleTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-lifecycle"), 0);

  @TempDir Path tmp;

  @Test
  void startFailsWhenNoMasterAnswersAndLeavesNoThreadBehind() throws IOException {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort();
    }
    FaroConf conf =
        TestWorkers.conf("127.0.0.1:" + deadPort, tmp.resolve("d"))
            .with("faro.master.client.retry.timeout", "300ms")
            .with("faro.network.connect.timeout", "200ms");
    WorkerServer worker = new WorkerServer(conf);

    assertThatThrownBy(worker::start)
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED))
        .hasMessageContaining("faro.master.client.retry.timeout");
    worker.close();
    Eventually.await(
        "every worker thread to end", WorkerLifecycleTest::workerThreads, List::isEmpty);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "faro.worker.rpc.port",
        "faro.worker.push.port",
        "faro.worker.fetch.port",
        "faro.worker.http.port"
      })
  void aPortInUseIsNamedWithItsKey(String key) throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      WorkerServer worker =
          new WorkerServer(
              TestWorkers.conf("127.0.0.1:1", tmp.resolve("d")).with(key, Integer.toString(port)));
      try {
        assertThatThrownBy(worker::start)
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("127.0.0.1:" + port)
            .hasMessageContaining("port " + port + " is in use")
            .hasMessageContaining("set " + key + " to a free port");
      } finally {
        worker.close();
      }
    }
    Eventually.await(
        "every worker thread to end", WorkerLifecycleTest::workerThreads, List::isEmpty);
  }

  @Test
  void aWorkerWhoseEveryDiskIsBrokenSaysWhichAndWhyAndDoesNotRegister() throws IOException {
    Path aFile = Files.writeString(tmp.resolve("a-file"), "not a directory");
    Path underAFile = aFile.resolve("data");
    try (FakeMaster master = new FakeMaster()) {
      WorkerServer worker =
          new WorkerServer(TestWorkers.conf(master.endpoint(), aFile, underAFile));
      try {
        assertThatThrownBy(worker::start)
            .isInstanceOfSatisfying(
                FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORAGE_FAILED))
            .hasMessageContaining("every disk of this worker is broken")
            .hasMessageContaining(
                "disk 0 ("
                    + aFile
                    + ":ssd, buffered I/O): broken: the check could not write to "
                    + aFile
                    + ": "
                    + aFile
                    + " is a file, not a directory")
            .hasMessageContaining(
                "disk 1 ("
                    + underAFile
                    + ":hdd, buffered I/O): broken: the check could not write to "
                    + underAFile
                    + ": "
                    + aFile
                    + " is a file, not a directory")
            .hasMessageContaining("faro.worker.dirs (comma-separated list of path:tier");
      } finally {
        worker.close();
      }
      assertThat(master.registrations())
          .as("a worker without a usable disk does not register")
          .isEmpty();
    }
    Eventually.await(
        "every worker thread to end", WorkerLifecycleTest::workerThreads, List::isEmpty);
  }

  @Test
  void aWorkerWithOneBrokenDiskStartsAndReportsIt() throws IOException {
    Path aFile = Files.writeString(tmp.resolve("a-file"), "not a directory");
    try (FakeMaster master = new FakeMaster();
        WorkerServer worker =
            new WorkerServer(TestWorkers.conf(master.endpoint(), tmp.resolve("good"), aFile))) {
      worker.start();

      assertThat(master.registrations()).hasSize(1);
      Eventually.await(
          "a heartbeat", () -> master.lastHeartbeat(worker.workerId().value()) != null);
      assertThat(master.lastHeartbeat(worker.workerId().value()).getDisksList())
          .extracting(DiskLoadP::getStatus)
          .containsExactly(DiskStatusP.HEALTHY, DiskStatusP.BROKEN);
    }
  }

  @Test
  void twoWorkersRunInOneJvmAndCloseCleanly() {
    try (FakeMaster master = new FakeMaster()) {
      WorkerServer first = new WorkerServer(TestWorkers.conf(master.endpoint(), tmp.resolve("w1")));
      WorkerServer second =
          new WorkerServer(TestWorkers.conf(master.endpoint(), tmp.resolve("w2")));
      try (first;
          second) {
        first.start();
        second.start();
        assertThat(first.workerId()).isNotEqualTo(second.workerId());
        assertThat(master.registrations()).hasSize(2);
        Batches batches = new Batches(false, 3);
        for (WorkerServer worker : List.of(first, second)) {
          try (WorkerClient client = new WorkerClient("client", worker.endpoint())) {
            client.reserve(SHUFFLE, 0, 0, 0);
            byte[] batch = batches.batchBytes(0, 0, 0, 1000);
            assertThat(client.push(SHUFFLE, List.of(new Part(0, 0, batch))))
                .containsExactly(PushStatusP.OK);
            client.commit(SHUFFLE);
            assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 0))).isEqualTo(batch);
          }
        }
      }
      Eventually.await(
          "every worker thread to end", WorkerLifecycleTest::workerThreads, List::isEmpty);
    }
  }

  @Test
  void aFullMemoryBudgetSlowsPushesDownWithoutLosingOrStallingThem() {
    try (FakeMaster master = new FakeMaster()) {
      FaroConf conf =
          TestWorkers.conf(master.endpoint(), tmp.resolve("bp"))
              .with("faro.worker.memory.budget", "64k")
              .with("faro.worker.flush.buffer.size", "1m");
      try (WorkerServer worker = new WorkerServer(conf);
          WorkerClient client = new WorkerClient("client", startAndGetEndpoint(worker))) {
        client.reserve(SHUFFLE, 0, 0, 0, 1, 2, 3);
        Batches batches = new Batches(false, 5);
        Map<Integer, ByteArrayOutputStream> expected = new HashMap<>();
        List<PushStatusP> statuses = new ArrayList<>();
        for (int frame = 0; frame < 40; frame++) {
          List<Part> parts = new ArrayList<>();
          for (int partition = 0; partition < 4; partition++) {
            byte[] batch = batches.batchBytes(0, 0, frame * 4 + partition, 2000);
            expected.computeIfAbsent(partition, p -> new ByteArrayOutputStream()).writeBytes(batch);
            parts.add(new Part(partition, 0, batch));
          }
          statuses.addAll(client.push(SHUFFLE, parts));
        }

        // 320k pushed through a 64k budget, with 1m flush buffers: only relief flushed them.
        assertThat(statuses)
            .contains(PushStatusP.SLOW_DOWN)
            .containsOnly(PushStatusP.OK, PushStatusP.SLOW_DOWN);
        client.commit(SHUFFLE);
        for (int partition = 0; partition < 4; partition++) {
          assertThat(client.fetchAll(new PartitionKey(SHUFFLE, partition, 0)))
              .isEqualTo(expected.get(partition).toByteArray());
        }
        assertThat(worker.memoryBudget().used()).isZero();
        assertThat(worker.memoryBudget().isPaused()).isFalse();
      }
    }
  }

  private static WorkerEndpoint startAndGetEndpoint(WorkerServer worker) {
    worker.start();
    return worker.endpoint();
  }

  private static List<String> workerThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(name -> name.startsWith("faro-worker"))
        .toList();
  }
}
