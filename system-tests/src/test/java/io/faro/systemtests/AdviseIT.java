package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code faro advise} on event logs that real Spark runs wrote: a job of many small blocks (100
 * maps x 1,000 reducers, about 50 bytes a block) and one of large blocks (4 x 4, megabytes a
 * block), run with the built-in shuffle (their logs compressed with zstd and lz4, Spark's two
 * codecs that advise must read), and the small-blocks job with Faro too. Advise must rank the
 * small-blocks job first and tell the large-blocks one to keep the built-in shuffle. That ranking
 * against the measured difference, over repeated interleaved runs, is bench/advise-check.sh's
 * (docs/benchmarks.md, "Advise against measurement").
 */
class AdviseIT {
  @TempDir Path dir;

  private static List<String> conf(String job, Path logs, String codec) {
    List<String> shape =
        job.equals("small")
            ? List.of(
                "spark.examples.blocks.maps=100",
                "spark.examples.blocks.reducers=1000",
                "spark.examples.blocks.bytes=5m")
            : List.of(
                "spark.examples.blocks.maps=4",
                "spark.examples.blocks.reducers=4",
                "spark.examples.blocks.bytes=40m");
    return new java.util.ArrayList<>(
        java.util.stream.Stream.concat(
                shape.stream(),
                java.util.stream.Stream.of(
                    "spark.app.name=advise-" + job,
                    "spark.eventLog.enabled=true",
                    "spark.eventLog.dir=" + logs.toUri(),
                    "spark.eventLog.compress=" + !codec.isEmpty(),
                    "spark.eventLog.compression.codec=" + (codec.isEmpty() ? "zstd" : codec)))
            .toList());
  }

  @Test
  void ranksTheManySmallBlocksJobAboveTheLargeBlocksJob() throws Exception {
    Path builtInLogs = Files.createDirectories(dir.resolve("builtin-logs"));
    Path faroLogs = Files.createDirectories(dir.resolve("faro-logs"));
    SparkJobRunner runner = new SparkJobRunner(dir);
    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(1))) {
      String master = cluster.masterEndpoint();
      runner
          .start(
              "blocks", "builtin", "1", master, "small-builtin", conf("small", builtInLogs, "zstd"))
          .awaitResult();
      runner
          .start(
              "blocks", "builtin", "1", master, "large-builtin", conf("large", builtInLogs, "lz4"))
          .awaitResult();
      runner
          .start("blocks", "faro", "1", master, "small-faro", conf("small", faroLogs, ""))
          .awaitResult();
    }
    try (var files = Files.list(builtInLogs)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .as("one log per codec")
          .anyMatch(n -> n.endsWith(".zstd"))
          .anyMatch(n -> n.endsWith(".lz4"));
    }

    List<Map<String, Object>> builtIn = advise(builtInLogs);
    assertThat(builtIn)
        .extracting(a -> a.get("name"))
        .as("the report:%n%s", markdown(builtInLogs))
        .containsExactly("advise-small", "advise-large");
    Map<String, Object> small = builtIn.get(0);
    Map<String, Object> large = builtIn.get(1);
    // Megabytes a block, a few tasks: Faro's fixed costs are all it would change.
    assertThat(large.get("verdict"))
        .isEqualTo("keep the built-in shuffle: Faro would cost more than it saves");
    assertThat((Long) small.get("saved_task_millis"))
        .isGreaterThan((Long) large.get("saved_task_millis"));
    // 100 maps x 1,000 reducers, about 50,000 rows: Spark fetches only the blocks that are not
    // empty, about 40% of them (1 - e^-0.5); then the checksum's aggregation (1,000 maps into 1).
    assertThat(blocksRead(small)).isBetween(30_000L, 60_000L);
    assertThat(blocksRead(large)).isLessThan(100L);

    // The premise, as the Faro run of the small-blocks job shows it: its reducers fetched one
    // chunk per partition instead of a block per map (the time it saves is measured by
    // bench/advise-check.sh, not asserted here: single runs on two shared cores are too loose).
    List<Map<String, Object>> faro = advise(faroLogs);
    assertThat(faro)
        .singleElement()
        .satisfies(a -> assertThat(a.get("verdict")).isEqualTo("runs on Faro already"));
    assertThat(blocksRead(faro.get(0))).isLessThan(blocksRead(small) / 10);
  }

  /** The Markdown report of {@code faro advise --event-logs DIR}. */
  private static String markdown(Path logs) {
    java.io.StringWriter out = new java.io.StringWriter();
    new CommandLine(new io.faro.cli.advise.AdviseCommand())
        .setOut(new java.io.PrintWriter(out, true))
        .execute("--event-logs", logs.toString());
    return out.toString();
  }

  /** Runs {@code faro advise --event-logs DIR --json -}; its applications, ranked. */
  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> advise(Path logs) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        new CommandLine(new io.faro.cli.advise.AdviseCommand())
            .setOut(
                new java.io.PrintWriter(new PrintStream(out, true, StandardCharsets.UTF_8), true))
            .setErr(
                new java.io.PrintWriter(new PrintStream(err, true, StandardCharsets.UTF_8), true))
            .execute("--event-logs", logs.toString(), "--json", "-");
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(code).as("%s%s", text, err).isZero();
    assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    Map<String, Object> report = (Map<String, Object>) Json.parse(text);
    return (List<Map<String, Object>>) report.get("applications");
  }

  @SuppressWarnings("unchecked")
  private static long blocksRead(Map<String, Object> app) {
    return ((List<Map<String, Object>>) app.get("stages"))
        .stream().mapToLong(s -> (Long) s.get("blocks_read")).sum();
  }
}
