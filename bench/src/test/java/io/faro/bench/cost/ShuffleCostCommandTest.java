package io.faro.bench.cost;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bin/faro bench-shuffle-cost} against a local cluster of real processes: every phase of
 * every measured empty shuffle is reported, in order, and the total is their sum. No timing is
 * asserted beyond that there is one.
 */
class ShuffleCostCommandTest {
  @TempDir Path dir;

  @Test
  @SuppressWarnings("unchecked")
  void reportsEveryPhase() throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    Path json = dir.resolve("cost.json");
    int code =
        new CommandLine(new ShuffleCostCommand())
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .execute(
                "--local-cluster",
                "--workers",
                "1",
                "--shuffles",
                "5",
                "--warmup",
                "1",
                "--maps",
                "3",
                "--partitions",
                "4",
                "--record-bytes",
                "10",
                "--json",
                json.toString());
    assertThat(code).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
    assertThat(out.toString())
        .contains("5 shuffles of 3 maps x 4 partitions, 10 bytes per map and partition");
    Map<String, Object> report = (Map<String, Object>) Json.parse(Files.readString(json));
    assertThat(report)
        .containsKeys(
            "first_map_ms",
            "other_map_ms",
            "commit_and_metadata_ms",
            "partition_read_ms",
            "shuffle_total_ms",
            "driver_phases_ms");
    // The driver timed every shuffle's placement and commit (only the measured ones).
    Map<String, Object> driver = (Map<String, Object>) report.get("driver_phases_ms");
    assertThat(driver).containsKeys("placement", "commit", "first_read");
    assertThat(((Number) ((Map<String, Object>) driver.get("commit")).get("p50")).doubleValue())
        .isPositive();
    for (String phase :
        new String[] {"first_map_ms", "commit_and_metadata_ms", "shuffle_total_ms"}) {
      Map<String, Object> q = (Map<String, Object>) report.get(phase);
      double p50 = ((Number) q.get("p50")).doubleValue();
      assertThat(p50).as(phase).isPositive();
      assertThat(((Number) q.get("p99")).doubleValue()).as(phase).isGreaterThanOrEqualTo(p50);
    }
  }

  @Test
  void needsExactlyOneCluster() {
    StringWriter err = new StringWriter();
    int code =
        new CommandLine(new ShuffleCostCommand())
            .setErr(new PrintWriter(err, true))
            .setExecutionExceptionHandler(
                (e, line, parsed) -> {
                  line.getErr().println(e.getMessage());
                  return 2;
                })
            .execute("--shuffles", "3");
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains("either --local-cluster or --masters");
  }
}
