package io.faro.bench;

import static io.faro.bench.BenchCommandTest.execute;
import static io.faro.bench.BenchCommandTest.number;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.testing.FaultInjection;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overload, on a real worker process: four map tasks push 512 MB of incompressible records as fast
 * as they can at one worker whose memory budget is 16 MB and whose disk is slowed to about 50 MB/s
 * per flusher (faro.testing.slow.disk.delay.per.mib, of the faro-testing module). The worker must
 * pause and answer SLOW_DOWN, the tasks must back off rather than revive or fail, the worker's
 * memory must stay within its budget plus a fixed overhead, and every record must come back once.
 */
class WorkerOverloadTest {
  private static final double BUDGET_MB = 16;

  @TempDir Path dir;

  @Test
  void fourTasksPushingAtASlowWorkerWithASmallBudgetSlowDownAndLoseNothing() throws Exception {
    Path cluster = dir.resolve("cluster");
    // The local cluster's only worker writes to worker-0/data: slowed from its first check.
    Path data = Files.createDirectories(cluster.resolve("worker-0").resolve("data"));
    Files.createFile(data.resolve(FaultInjection.SLOW_DISK_FILE));
    Path conf = dir.resolve("overload.conf");
    Files.writeString(
        conf,
        "faro.worker.memory.budget=16m\n"
            + "faro.testing.slow.disk.delay.per.mib=20ms\n"
            + "faro.worker.disk.check.interval=200ms\n");
    Path json = dir.resolve("bench.json");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();

    int code =
        execute(
            out,
            err,
            "--local-cluster",
            "--workers",
            "1",
            "--threads",
            "4",
            "--maps",
            "8",
            "--total-bytes",
            "512m",
            "--warmup",
            "0",
            "--data",
            "random",
            "--work-dir",
            cluster.toString(),
            "--conf",
            conf.toString(),
            "--json",
            json.toString(),
            "--timeout",
            "300s");

    assertThat(code).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
    String report = Files.readString(json);
    assertThat(report).as("every record read back once").contains("\"verified\": true");
    assertThat(number(report, "memory_pauses")).as("the worker paused").isPositive();
    assertThat(number(report, "map_slow_downs")).as("and said so").isPositive();
    assertThat(number(report, "map_revives")).as("overload moves no partition").isZero();
    // Pushed data held never passes the budget (it pauses at 90% of it).
    assertThat(number(report, "worker_peak_memory_budget_mb")).isLessThanOrEqualTo(BUDGET_MB);
    // Direct memory: the budget, the disk's read buffers and flusher staging (64 MB + 2 x 1 MB)
    // and at most 32 MB of network buffers. Were pushes not held back, the 512 MB would pile up.
    assertThat(number(report, "worker_peak_direct_mb")).isLessThanOrEqualTo(BUDGET_MB + 66 + 32);
    // The whole process: a worker JVM at rest takes about 150-200 MB here, and about 220 MB under
    // this load; 500 MB leaves room for its heap to grow on a loaded machine, and is still below
    // what the 512 MB pushed would take if it were held.
    if (Files.exists(Path.of("/proc/self/status"))) {
      assertThat(number(report, "worker_peak_rss_mb")).isPositive().isLessThanOrEqualTo(500);
    }
  }
}
