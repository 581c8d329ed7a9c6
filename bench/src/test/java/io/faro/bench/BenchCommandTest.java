package io.faro.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.FaroSubcommand;
import io.faro.common.json.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * `faro bench` end to end: a local cluster of real processes, a small shuffle, a verified report.
 */
class BenchCommandTest {
  static final List<String> REQUIRED_KEYS =
      List.of(
          "push_mb_per_s",
          "fetch_mb_per_s",
          "commit_ms",
          "push_latency_p50_ms",
          "push_latency_p99_ms",
          "worker_cpu_s_per_gb",
          "client_cpu_s_per_gb",
          "worker_peak_rss_mb",
          "worker_peak_direct_mb",
          "bytes",
          "records",
          "verified",
          "settings",
          "machine");

  @TempDir Path dir;

  @Test
  void benchmarksALocalClusterAndWritesAVerifiedJsonReport() throws Exception {
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
            "--total-bytes",
            "8m",
            "--warmup",
            "1m",
            "--work-dir",
            dir.resolve("cluster").toString(),
            "--json",
            json.toString(),
            "--timeout",
            "120s");

    assertThat(code).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
    String report = Files.readString(json);
    for (String key : REQUIRED_KEYS) {
      assertThat(report).contains("\"" + key + "\":");
    }
    assertThat(report).contains("\"verified\": true");
    assertThat(number(report, "bytes")).isEqualTo(8 * 1024 * 1024 / 100 * 100);
    assertThat(number(report, "records")).isEqualTo(8 * 1024 * 1024 / 100);
    for (String positive :
        List.of(
            "push_mb_per_s",
            "fetch_mb_per_s",
            "worker_cpu_s_per_gb",
            "client_cpu_s_per_gb",
            "push_latency_samples")) {
      assertThat(number(report, positive)).as(positive).isPositive();
    }
    // Every request of every map is timed: each map pushes at least one request.
    assertThat(number(report, "push_latency_samples"))
        .isGreaterThanOrEqualTo(number(report, "maps"));
    assertThat(report).doesNotContain("push_probe");
    if (Files.exists(Path.of("/proc/self/status"))) {
      assertThat(number(report, "worker_peak_rss_mb")).isPositive();
    }
    assertThat(out.toString())
        .contains("Warm-up: 1 MB")
        .contains("verified")
        .contains("yes")
        .contains("JSON report:");
    assertThat(number(report, "warmup_bytes")).isEqualTo(1 << 20);
    // The local cluster was stopped: none of its processes is left.
    List<Long> pids =
        Json.numbers(Files.readString(dir.resolve("cluster").resolve("cluster.json")), "pid");
    assertThat(pids)
        .hasSize(2)
        .noneMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
  }

  @Test
  void anUnreachableClusterFailsWithAMessageNamingIt() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort(); // closed again: nothing listens there
    }
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();

    int code =
        execute(
            out,
            err,
            "--masters",
            "127.0.0.1:" + port,
            "--timeout",
            "30s",
            "--set",
            "faro.master.client.retry.timeout=1s",
            "--set",
            "faro.network.connect.timeout=500ms");

    assertThat(code).isEqualTo(1);
    assertThat(err.toString()).contains("faro bench failed").contains("127.0.0.1:" + port);
  }

  @Test
  void binFaroFindsTheCommandThroughServiceLoader() {
    assertThat(ServiceLoader.load(FaroSubcommand.class).stream().map(ServiceLoader.Provider::type))
        .contains(BenchCommand.class);
    assertThat(new CommandLine(new BenchCommand()).getCommandName()).isEqualTo("bench");
  }

  static int execute(StringWriter out, StringWriter err, String... args) {
    return new CommandLine(new BenchCommand())
        .setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true))
        .execute(args);
  }

  /** The number under {@code key} (the first occurrence) of a JSON text. */
  static double number(String json, String key) {
    Matcher m =
        Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(-?[0-9.]+(?:[eE][-+]?[0-9]+)?)")
            .matcher(json);
    assertThat(m.find()).as("a number under %s", key).isTrue();
    return Double.parseDouble(m.group(1));
  }
}
