package io.faro.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.bench.BenchSettings;
import io.faro.bench.Codec;
import io.faro.bench.cluster.ClusterTarget;
import io.faro.bench.cluster.WorkerReading;
import io.faro.bench.run.LatencySummary;
import io.faro.bench.run.PhaseTimes;
import io.faro.bench.run.RunResult;
import io.faro.bench.run.WorkerUsage;
import io.faro.bench.workload.DataKind;
import io.faro.bench.workload.Verification;
import io.faro.common.network.HostPort;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The derived figures and the JSON keys, on a made-up run whose answers are known. */
class JsonReportTest {
  private static final long GB = 1L << 30;

  private static BenchReport report(Verification verification) {
    BenchSettings settings =
        new BenchSettings(
            new ClusterTarget.Running(List.of(new HostPort("127.0.0.1", 9097))),
            Optional.empty(),
            Map.of(),
            8,
            64,
            2 * GB,
            0,
            100,
            DataKind.COMPRESSIBLE,
            Codec.LZ4,
            2,
            1,
            Duration.ofMinutes(5));
    // Two workers: 0.6 s and 0.4 s of CPU for ingest, 0.2 s each for fetch; peaks 300 and 500 MB.
    List<WorkerUsage> workers =
        List.of(
            new WorkerUsage("w0", 600_000_000L, 200_000_000L, reading("w0", 300)),
            new WorkerUsage("w1", 400_000_000L, 200_000_000L, reading("w1", 500)));
    RunResult result =
        new RunResult(
            2 * GB,
            2 * GB / 100,
            GB,
            GB,
            new PhaseTimes(5_000_000, 2_000_000_000L, 500_000_000L, 1_000_000_000L),
            new LatencySummary(100, 1.5, 9.25),
            new LatencySummary(10, 0.1, 2),
            new LatencySummary(8, 20, 40),
            3.5,
            12,
            0,
            1.25,
            3_000_000_000L,
            1_000_000_000L,
            0.25,
            workers,
            verification);
    return new BenchReport(
        settings,
        "running cluster",
        Map.of("faro.client.push.compress", "true"),
        new MachineFacts(2, 24 * GB, "cpu", "Linux", "amd64", "17", 0.5),
        Instant.parse("2025-01-01T00:00:00Z"),
        result);
  }

  private static WorkerReading reading(String id, long peakRssMb) {
    return new WorkerReading(
        id,
        0,
        100L << 20,
        peakRssMb << 20,
        10L << 20,
        64L << 20,
        0,
        32L << 20,
        900L << 20,
        3,
        250,
        1,
        java.util.List.of("direct"));
  }

  @Test
  void derivesThroughputCpuPerGbAndPeaks() {
    BenchReport report = report(new Verification(true, 0, List.of()));

    assertThat(report.pushMbPerSecond()).isEqualTo(1024.0); // 2 GB in 2 s
    assertThat(report.pushAndCommitMbPerSecond()).isEqualTo(2048 / 2.5);
    assertThat(report.fetchMbPerSecond()).isEqualTo(2048.0);
    assertThat(report.workerCpuSecondsPerGb()).isEqualTo(0.7); // 1.4 s for 2 GB
    assertThat(report.clientCpuSecondsPerGb()).isEqualTo(2.0);
    assertThat(report.workerPeakRssMb()).isEqualTo(500.0);
    assertThat(report.compressionRatio()).isEqualTo(2.0);
  }

  @Test
  void jsonHasTheStableKeys() {
    String json = JsonReport.write(report(new Verification(true, 0, List.of())));

    assertThat(json)
        .contains(
            "\"push_mb_per_s\": 1024.0",
            "\"fetch_mb_per_s\": 2048.0",
            "\"commit_ms\": 500.0",
            "\"push_latency_p50_ms\": 1.5",
            "\"push_latency_p99_ms\": 9.25",
            "\"push_latency_samples\": 100",
            "\"push_latency_method\": \"time from sending each push request to its answer, every request of every "
                + "map task\"",
            "\"worker_cpu_s_per_gb\": 0.7",
            "\"client_cpu_s_per_gb\": 2.0",
            "\"client_workload_cpu_s_per_gb\": 0.25",
            "\"map_slow_downs\": 12",
            "\"map_revives\": 0",
            "\"map_back_off_ms_mean\": 1.25",
            "\"worker_peak_rss_mb\": 500.0",
            "\"worker_peak_direct_mb\": 64.0",
            "\"bytes\": 2147483648",
            "\"records\": 21474836",
            "\"verified\": true",
            "\"cores\": 2",
            "\"memory_mb\": 24576",
            "\"load_average_at_start\": 0.5",
            "\"maps\": 8",
            "\"codec\": \"lz4\"",
            "\"worker_id\": \"w1\"");
    assertThat(json).doesNotContain("push_probe");
    assertThat(TableReport.write(report(new Verification(true, 0, List.of()))))
        .contains("1024 MB/s")
        .contains("100 push requests")
        .doesNotContain("probe");
  }

  @Test
  void aFailedVerificationShowsInBothFormats() {
    BenchReport report =
        report(new Verification(false, 1, List.of("partition 3: wrote 1 records")));

    assertThat(JsonReport.write(report))
        .contains(
            "\"verified\": false", "\"mismatched_partitions\": 1", "partition 3: wrote 1 records");
    assertThat(TableReport.write(report)).contains("NO").contains("partition 3: wrote 1 records");
  }
}
