package io.faro.worker.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.PushStatusP;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import io.faro.worker.server.WorkerServer;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker's status RPC on a real worker: the process's own CPU, memory and budget figures. */
class WorkerStatusTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-status"), 0);

  @TempDir Path tmp;

  @Test
  void reportsCpuMemoryAndTheBudgetPeakAfterAPush() {
    try (FakeMaster master = new FakeMaster();
        WorkerServer worker =
            new WorkerServer(
                TestWorkers.conf(master.endpoint(), tmp.resolve("disk0"))
                    .with("faro.worker.io.mode", "direct"));
        ClientPool pool = new ClientPool("status-test", NetworkSettings.from(FaroConf.empty()))) {
      worker.start();
      HostPort rpc = worker.endpoint().rpc();
      WorkerStatusResponse before = status(pool, rpc);
      assertThat(before.getPeakMemoryBudgetUsedBytes()).isZero();

      try (WorkerClient client = new WorkerClient("pusher", worker.endpoint())) {
        client.reserve(SHUFFLE, 0, 0, 0);
        byte[] batch = new Batches(false, 3).batchBytes(0, 0, 0, 32 * 1024);
        assertThat(client.push(SHUFFLE, List.of(new WorkerClient.Part(0, 0, batch))))
            .containsExactly(PushStatusP.OK);
      }
      // The OS counts process CPU in clock ticks (10 ms here), so a short push alone may not move
      // it.
      burnCpu(50_000_000L);
      WorkerStatusResponse after = status(pool, rpc);

      assertThat(after.getProcessCpuNanos())
          .as("process CPU follows the 50 ms this thread burned")
          .isGreaterThan(before.getProcessCpuNanos());
      assertThat(after.getPeakMemoryBudgetUsedBytes())
          .as("the pushed frame was counted")
          .isGreaterThanOrEqualTo(32 * 1024);
      assertThat(after.getMemoryPauseBytes()).isEqualTo(worker.settings().memory().pauseBytes());
      assertThat(after.getHeapUsedBytes()).isPositive();
      assertThat(after.getHeapMaxBytes()).isGreaterThanOrEqualTo(after.getHeapUsedBytes());
      assertThat(after.getPeakDirectMemoryBytes())
          .isGreaterThanOrEqualTo(after.getDirectMemoryBytes());
      assertThat(after.getUptimeMs()).isPositive();
      assertThat(after.getDiskIoModesList()).containsExactly("direct");
      if (Files.exists(Path.of("/proc/self/status"))) {
        assertThat(after.getRssBytes()).isPositive();
        assertThat(after.getPeakRssBytes()).isGreaterThanOrEqualTo(after.getRssBytes());
      }
    }
  }

  @Test
  void readsResidentMemoryFromProcStatusAndZerosWithoutIt() throws Exception {
    Path status = tmp.resolve("status");
    Files.writeString(
        status, "Name:\tjava\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t42\n");

    assertThat(WorkerStatusSampler.readResident(status))
        .isEqualTo(new WorkerStatusSampler.ResidentMemory(100L << 20, 200L << 20));
    assertThat(WorkerStatusSampler.readResident(tmp.resolve("missing")))
        .isEqualTo(WorkerStatusSampler.ResidentMemory.UNKNOWN);
  }

  /** Written so that the JIT keeps the spinning loop. */
  private static volatile long burned;

  /** Spins this thread until it has used {@code nanos} of CPU, or ten seconds have passed. */
  private static void burnCpu(long nanos) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long start = threads.getCurrentThreadCpuTime();
    long deadline = System.nanoTime() + 10_000_000_000L;
    long sink = 0;
    while (threads.getCurrentThreadCpuTime() - start < nanos && System.nanoTime() < deadline) {
      for (int i = 0; i < 100_000; i++) {
        sink += i * 31L ^ sink;
      }
    }
    burned = sink;
  }

  private static WorkerStatusResponse status(ClientPool pool, HostPort rpc) {
    return WorkerClient.await(
        pool.call(rpc, WorkerStatusRequest.getDefaultInstance(), WorkerStatusResponse.class),
        "worker status");
  }
}
