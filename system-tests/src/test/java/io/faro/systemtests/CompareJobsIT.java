package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import io.faro.examples.CompareJobs;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What {@code bench/spark-compare.sh} relies on: each comparison job, run tiny in its own JVM with
 * Spark's built-in shuffle and then through a real one-worker Faro cluster, prints one JSON line,
 * really ran the shuffle manager of its mode, moved shuffle bytes, and gives the same checksum in
 * both modes.
 */
class CompareJobsIT {
  /**
   * Small enough for six JVMs to finish in under a minute, large enough for every job to shuffle.
   */
  private static final String SCALE = "0.0005";

  @TempDir static Path dir;
  private static LocalCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(1));
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"large", "small-blocks", "sql"})
  void faroGivesTheBuiltInShufflesChecksum(String job) throws Exception {
    String builtin = run(job, "builtin");
    String faro = run(job, "faro");

    assertThat(Json.string(builtin, "shuffle_manager"))
        .isEqualTo("org.apache.spark.shuffle.sort.SortShuffleManager");
    assertThat(Json.string(faro, "shuffle_manager")).isEqualTo(CompareJobs.FARO_SHUFFLE_MANAGER);
    for (String line : List.of(builtin, faro)) {
      assertThat(Json.string(line, "job")).isEqualTo(job);
      assertThat(Json.number(line, "records")).as(line).isPositive();
      assertThat(Json.number(line, "shuffle_write_bytes")).as(line).isPositive();
    }
    // Not asserted for Faro yet: its reader reports read bytes to the task's temporary read
    // metrics but never merges them into the task's metrics (Spark's own reader calls
    // TaskMetrics.mergeShuffleReadMetrics when its iterator completes), so Faro shows 0 here.
    assertThat(Json.number(builtin, "shuffle_read_bytes")).as(builtin).isPositive();
    assertThat(Json.string(faro, "checksum"))
        .as("faro: %s%nbuiltin: %s", faro, builtin)
        .isEqualTo(Json.string(builtin, "checksum"));
  }

  private static String run(String job, String mode) throws Exception {
    return new SparkJobRunner(dir)
        .run(job, mode, SCALE, cluster.masterEndpoint(), job + "-" + mode);
  }
}
