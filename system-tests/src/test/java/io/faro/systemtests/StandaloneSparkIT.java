package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark settings that change how executors live and load classes, on a Spark standalone cluster of
 * real processes (one master, two workers) and a local Faro cluster: dynamic allocation without
 * Spark's external shuffle service, and {@code spark.executor.userClassPathFirst}.
 */
class StandaloneSparkIT {
  private static final String SCALE = "0.25";

  @TempDir static Path dir;
  private static SparkJobRunner runner;
  private static LocalCluster faro;
  private static SparkStandalone spark;

  @BeforeAll
  static void start() throws Exception {
    runner = new SparkJobRunner(dir);
    faro = LocalCluster.start(dir.resolve("faro"), LocalCluster.Options.workers(2));
    spark = SparkStandalone.start(dir.resolve("spark"), 2, 2);
  }

  @AfterAll
  static void stop() throws Exception {
    if (spark != null) {
      spark.close();
    }
    if (faro != null) {
      faro.close();
    }
  }

  /**
   * The job's executors ran the map tasks of a shuffle, are all released while idle, and the same
   * shuffle is read again on new executors. The driver set nothing but Faro's shuffle manager,
   * dynamic allocation and fallback policy never: Faro's plugin told Spark that the shuffle data
   * outlives executors, so Spark released them (it refuses to start dynamic allocation without a
   * shuffle service otherwise, or keeps executors for their shuffles with shuffle tracking) and
   * found every map output still readable: no stage ran again.
   */
  @Test
  void executorsReleasedAfterTheMapsLeaveEveryMapOutputReadable() throws Exception {
    String expected = releasedBuiltInChecksum();
    List<String> conf = dynamicAllocation("spark.faro.client.fallback.policy=never");
    String result =
        runner
            .start("released", "faro", SCALE, faro.masterEndpoint(), "released-faro", conf)
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

  /**
   * A shuffle that fell back to Spark's built-in shuffle keeps its map outputs on the executors
   * that ran them. Under dynamic allocation without the external shuffle service, policy always
   * (like auto) has Faro turn Spark's shuffle tracking on, so Spark keeps those executors while the
   * shuffle lives instead of losing its files with them: the second read finds every map output, no
   * stage runs again, no task fails.
   */
  @Test
  void aShuffleThatFellBackKeepsItsExecutorsUnderDynamicAllocation() throws Exception {
    String expected = releasedBuiltInChecksum();
    List<String> conf =
        dynamicAllocation(
            "spark.faro.client.fallback.policy=always",
            // Idle executors go after 2 s; holding shuffle files, they must still be here at 10 s.
            "spark.examples.released.wait.seconds=10");
    SparkJobRunner.Started started =
        runner.start("released", "faro", SCALE, faro.masterEndpoint(), "fell-back-faro", conf);
    String result = started.awaitResult();

    assertThat(Json.string(result, "checksum")).isEqualTo(expected);
    assertThat(Files.readString(started.output()))
        .contains(
            "uses Spark's built-in shuffle, not Faro (spark.faro.client.fallback.policy=always)")
        .contains("spark.dynamicAllocation.shuffleTracking.enabled=true");
    assertThat(Json.number(result, "executors_left_before_reread"))
        .as("executors kept for the shuffle files they hold")
        .isPositive();
    assertThat(Json.number(result, "stage_retries")).as("map stages run again").isZero();
    assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
  }

  /** The released job's checksum with the built-in shuffle (run once, for both tests). */
  private static String releasedBuiltIn;

  private static synchronized String releasedBuiltInChecksum() throws Exception {
    if (releasedBuiltIn == null) {
      releasedBuiltIn = Json.string(runner.builtin("released", SCALE, List.of()), "checksum");
    }
    return releasedBuiltIn;
  }

  /**
   * The standalone cluster's executor settings, dynamic allocation that releases executors idle for
   * 2 s, one core per executor, and {@code more}.
   */
  private static List<String> dynamicAllocation(String... more) throws java.io.IOException {
    List<String> conf = new ArrayList<>(spark.executorConf());
    conf.addAll(
        List.of(
            "spark.dynamicAllocation.enabled=true",
            "spark.dynamicAllocation.minExecutors=0",
            "spark.dynamicAllocation.initialExecutors=2",
            "spark.dynamicAllocation.executorIdleTimeout=2s",
            "spark.dynamicAllocation.schedulerBacklogTimeout=1s",
            "spark.executor.cores=1"));
    conf.addAll(List.of(more));
    return conf;
  }

  /**
   * With {@code spark.executor.userClassPathFirst=true} and Faro's jar on the executors' class path
   * only (as a shuffle manager's jar must be there for Spark 3.5), Faro carries the shuffle. With
   * the jar among the application's jars too, the executors would load Faro's classes twice and
   * fail every task: under fallback policy auto (the default) every shuffle uses Spark's built-in
   * shuffle, saying why; under never the driver refuses to start, naming the settings.
   */
  @Test
  void userClassPathFirstCarriesTheShuffleOrFailsAtOnceNamingTheSetting() throws Exception {
    String expected = Json.string(runner.builtin("sql", "0.02", List.of()), "checksum");
    List<String> conf = new ArrayList<>(spark.executorConf());
    conf.add("spark.executor.userClassPathFirst=true");
    String result =
        runner
            .start("sql", "faro", "0.02", faro.masterEndpoint(), "user-first-faro", conf)
            .awaitResult();
    assertThat(Json.string(result, "checksum")).isEqualTo(expected);
    assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();

    conf.add("spark.jars=" + SparkJobRunner.property("faro.demo.clientJar").toUri());
    SparkJobRunner.Started fellBack =
        runner.start("sql", "faro", "0.02", faro.masterEndpoint(), "user-first-auto", conf);
    String builtInResult = fellBack.awaitResult();
    assertThat(Json.string(builtInResult, "checksum")).isEqualTo(expected);
    assertThat(Files.readString(fellBack.output()))
        .contains(
            "uses Spark's built-in shuffle, not Faro (spark.faro.client.fallback.policy=auto)")
        .contains("spark.executor.userClassPathFirst=true with Faro's jar in spark.jars");

    conf.add("spark.faro.client.fallback.policy=never");
    SparkJobRunner.Started twice =
        runner.start("sql", "faro", "0.02", faro.masterEndpoint(), "user-first-twice", conf);
    assertThat(twice.process().waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(twice.process().exitValue()).isNotZero();
    assertThat(Files.readString(twice.output()))
        .contains("spark.executor.userClassPathFirst=true with Faro's jar in spark.jars")
        .contains("spark.executor.extraClassPath");
  }
}
