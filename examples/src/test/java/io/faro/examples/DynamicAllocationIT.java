package io.faro.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic allocation without Spark's external shuffle service, on a Spark standalone cluster of
 * real processes and a local Faro cluster: the job's executors ran the map tasks of a shuffle, are
 * all released while idle, and the same shuffle is read again on new executors. The driver set
 * nothing but Faro's shuffle manager and dynamic allocation: Faro's plugin told Spark that the
 * shuffle data outlives executors, so Spark released them (it refuses to start dynamic allocation
 * without a shuffle service otherwise, or keeps executors for their shuffles with shuffle tracking)
 * and found every map output still readable: no stage ran again.
 */
class DynamicAllocationIT {
  private static final String SCALE = "0.25";

  @TempDir static Path dir;

  @Test
  void executorsReleasedAfterTheMapsLeaveEveryMapOutputReadable() throws Exception {
    SparkJobRunner runner = new SparkJobRunner(dir);
    String expected =
        Json.string(runner.run("released", "builtin", SCALE, "", "released-builtin"), "checksum");
    try (LocalCluster cluster =
            LocalCluster.start(dir.resolve("faro"), LocalCluster.Options.workers(2));
        SparkStandalone spark = SparkStandalone.start(dir.resolve("spark"), 2, 2)) {
      List<String> conf = new ArrayList<>(spark.executorConf());
      conf.addAll(
          List.of(
              "spark.dynamicAllocation.enabled=true",
              "spark.dynamicAllocation.minExecutors=0",
              "spark.dynamicAllocation.initialExecutors=2",
              "spark.dynamicAllocation.executorIdleTimeout=2s",
              "spark.dynamicAllocation.schedulerBacklogTimeout=1s",
              "spark.executor.cores=1"));
      String result =
          runner
              .start("released", "faro", SCALE, cluster.masterEndpoint(), "released-faro", conf)
              .awaitResult();

      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "executors_left_before_reread"))
          .as("executors left once the maps were done and every executor idle")
          .isZero();
      assertThat(Json.number(result, "executors_removed"))
          .as("executors released while idle between the two reads")
          .isGreaterThanOrEqualTo(2);
      assertThat(Json.number(result, "stage_retries"))
          .as("map stages run again for lost outputs")
          .isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
    }
  }
}
