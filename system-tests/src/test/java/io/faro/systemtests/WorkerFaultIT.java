package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import io.faro.common.testing.Eventually;
import io.faro.examples.CompareJobs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Workers fail under real Spark jobs (each in its own JVM) on a local cluster of real processes: a
 * worker killed with SIGKILL while maps push or while reducers fetch, with and without replication;
 * connections dropped at random; map tasks whose first attempt fails after pushing everything; one
 * reducer many times larger than the split threshold. Every job must give the built-in shuffle's
 * checksum.
 */
class WorkerFaultIT {
  private static final String SCALE = "0.02";
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
  private static final String REPLICATE = "spark.faro.client.push.replicate.enabled=true";

  @TempDir static Path dir;
  private static SparkJobRunner runner;
  private static String expectedLarge;

  @BeforeAll
  static void builtinResults() throws Exception {
    runner = new SparkJobRunner(dir);
    expectedLarge = Json.string(runner.builtin("large", SCALE, List.of()), "checksum");
    assertThat(expectedLarge).isNotBlank();
  }

  private static LocalCluster cluster(String name, String... settings) throws IOException {
    Path conf = dir.resolve(name + ".conf");
    // Small chunks: reducers fetch many, so a worker killed while they read is caught mid-read.
    Files.writeString(conf, "faro.worker.chunk.size=256k\n" + String.join("\n", settings) + "\n");
    return LocalCluster.start(dir.resolve(name), LocalCluster.Options.workers(3).withConf(conf));
  }

  @Test
  void withReplicationAWorkerKilledWhileMapsPushCostsNoStageRetry() throws Exception {
    String result =
        largeJobWithAWorkerKilled(
            "replicated-push",
            "worker-1",
            "appended_bytes",
            List.of(REPLICATE, "spark.faro.client.push.batch.size=16k"));
    assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
  }

  @Test
  void withReplicationAWorkerKilledWhileReducersFetchCostsNoStageRetry() throws Exception {
    // In the runs layout: readers that lose a worker mid-read resume on replicas in runs too.
    String result =
        largeJobWithAWorkerKilled(
            "replicated-fetch",
            "worker-2",
            "fetched_chunks",
            List.of(
                REPLICATE,
                "spark.faro.client.fetch.prefetch.chunks=1",
                CompareJobs.READ_PAUSE_KEY + "=30"),
            "faro.worker.tier.ssd.layout=runs");
    assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
    // Readers were mid-read on the victim: some resumed on the replica at the chunk they lost.
    String out = Files.readString(dir.resolve("replicated-fetch.out"));
    assertThat(out).contains("switching to the other copy at once: its worker cannot be reached");
    // A dead worker refuses connections: nobody waits out retries on it when a replica exists.
    assertThat(
            out.lines().filter(l -> l.contains("Connection refused") && l.contains("asking again")))
        .as("retries of a copy whose worker refused the connection")
        .isEmpty();
  }

  @Test
  void withoutReplicationAWorkerKilledWhileMapsPushIsRepairedByAStageRetry() throws Exception {
    String result =
        largeJobWithAWorkerKilled(
            "plain-push",
            "worker-0",
            "appended_bytes",
            // Maps that push for seconds: the kill, which follows the first bytes the victim
            // takes by one poll of its status, lands while they push, not after the small job
            // has pushed, committed and read everything (which costs no retry at all).
            List.of("spark.faro.client.push.batch.size=16k", CompareJobs.MAP_PAUSE_KEY + "=20"));
    // The victim held acknowledged data of the first generation: lost, and written again.
    assertThat(Json.number(result, "stage_retries")).as("stage retries").isPositive();
    assertThat(Files.readString(dir.resolve("plain-push.out"))).contains("runs again");
  }

  /**
   * Runs the large job on a fresh cluster and SIGKILLs worker {@code victim} once its status
   * counter {@code counter} is positive (it holds pushed data, or has served a chunk); checks the
   * job's checksum and returns its JSON line. {@code workerSettings} go to the cluster's members.
   */
  private static String largeJobWithAWorkerKilled(
      String name, String victim, String counter, List<String> conf, String... workerSettings)
      throws Exception {
    try (LocalCluster cluster = cluster(name, workerSettings)) {
      SparkJobRunner.Started job =
          runner.start("large", "faro", SCALE, cluster.masterEndpoint(), name, conf);
      LocalCluster.Member member = cluster.member(victim);
      awaitWorker(member, counter, v -> v > 0, job);

      kill(member);

      String result = job.awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expectedLarge);
      return result;
    }
  }

  @Test
  void connectionsDroppedAtRandomLoseAndDoubleNothing() throws Exception {
    try (LocalCluster cluster = cluster("drops", "faro.testing.drop.connections.per.mille=5")) {
      // Small batches and frames: thousands of pushes, of which a few dozen lose their connection.
      String result =
          runner
              .start(
                  "large",
                  "faro",
                  SCALE,
                  cluster.masterEndpoint(),
                  "drops",
                  List.of(
                      "spark.faro.client.push.batch.size=4k",
                      "spark.faro.client.push.merge.size=16k",
                      "spark.faro.client.fetch.retry.wait=100ms"))
              .awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expectedLarge);
      long drops = 0;
      for (LocalCluster.Member m : cluster.members()) {
        if (m.role().equals("worker")) {
          drops +=
              Files.readString(m.log()).lines().filter(l -> l.contains("fault injection")).count();
        }
      }
      assertThat(drops).as("connections the workers dropped").isGreaterThan(5);
    }
  }

  @Test
  void retriedMapAttemptsAreReadOnce() throws Exception {
    List<String> retries = List.of("spark.master=local[2,4]");
    String expected = Json.string(runner.builtin("flaky", SCALE, retries), "checksum");
    try (LocalCluster cluster = cluster("flaky")) {
      String result =
          runner
              .start("flaky", "faro", SCALE, cluster.masterEndpoint(), "flaky-faro", retries)
              .awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "failed_tasks"))
          .as("map attempts that failed after pushing")
          .isPositive();
    }
  }

  @Test
  void speculativeCopiesOfStragglersThatPushedHalfTheirRowsAreReadOnce() throws Exception {
    String expected = Json.string(runner.builtin("slow", "0.25", List.of()), "checksum");
    try (LocalCluster cluster = cluster("slow");
        SparkStandalone spark = SparkStandalone.start(dir.resolve("spark"), 2, 2)) {
      List<String> conf = new ArrayList<>(spark.executorConf());
      conf.addAll(
          List.of(
              "spark.speculation=true",
              "spark.speculation.interval=200ms",
              "spark.speculation.quantile=0.5",
              "spark.speculation.multiplier=2",
              "spark.speculation.minTaskRuntime=1s",
              // Small batches and frames: a straggler's first half is pushed before it stalls.
              "spark.faro.client.push.batch.size=4k",
              "spark.faro.client.push.merge.size=16k"));
      String result =
          runner
              .start("slow", "faro", "0.25", cluster.masterEndpoint(), "slow-faro", conf)
              .awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "speculative_tasks"))
          .as("speculative copies started")
          .isPositive();
      // The stragglers stall for a minute unless killed: a killed attempt is one whose copy won.
      assertThat(Json.number(result, "failed_tasks"))
          .as("stragglers killed after their copy won")
          .isPositive();
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      // Readers fetch whole chunks: the stragglers' pushed halves were in them, and were dropped.
      assertThat(Json.number(result, "shuffle_read_bytes"))
          .as("bytes fetched, the stragglers' included")
          .isGreaterThan(Json.number(result, "shuffle_write_bytes"));
    }
  }

  @Test
  void aReducerFarLargerThanTheSplitThresholdSpreadsOverEveryWorker() throws Exception {
    String expected = Json.string(runner.builtin("skew", "0.25", List.of()), "checksum");
    long budget = 32L << 20;
    try (LocalCluster cluster =
        cluster(
            "skew",
            "faro.worker.partition.split.threshold=2m",
            "faro.worker.memory.budget=" + budget)) {
      String result =
          runner
              .start("skew", "faro", "0.25", cluster.masterEndpoint(), "skew-faro", List.of())
              .awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      // A quarter of 1 million rows of ~100 bytes go to one reducer: over 10 times the threshold.
      long splits = 0;
      for (LocalCluster.Member m : cluster.members()) {
        if (!m.role().equals("worker")) {
          continue;
        }
        String status = workerStatus(m);
        assertThat(Json.number(status, "appended_bytes"))
            .as("bytes on %s", m.name())
            .isGreaterThan(2L << 20);
        assertThat(Json.number(status, "peak_memory_budget_used_bytes"))
            .as("peak budget on %s", m.name())
            .isLessThanOrEqualTo(budget);
        splits += Json.number(status, "split_answers");
      }
      assertThat(splits).as("pushes answered with a split").isPositive();
    }
  }

  // ------------------------------------------------------------------ helpers

  private static void kill(LocalCluster.Member member) throws InterruptedException {
    member.process().destroyForcibly(); // SIGKILL
    assertThat(member.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
  }

  private static String workerStatus(LocalCluster.Member worker) throws IOException {
    long rpcPort = Json.number(worker.ports(), "rpcPort");
    FaroCommand.CommandResult r =
        FaroCommand.run(
            ADMIN_TIMEOUT,
            "admin",
            "worker-status",
            "--worker",
            "127.0.0.1:" + rpcPort,
            "--timeout",
            "5s");
    assertThat(r.exitCode()).as(r.output()).isZero();
    return r.output();
  }

  /**
   * Waits until a counter of the worker's status satisfies {@code condition}, while the job runs.
   */
  private static void awaitWorker(
      LocalCluster.Member worker,
      String counter,
      LongPredicate condition,
      SparkJobRunner.Started job) {
    // The worker is another process: its status, polled, is the only signal.
    Eventually.awaitEvery(
        Duration.ofMillis(200),
        "worker " + worker.name() + " to reach the awaited " + counter,
        Duration.ofMinutes(2),
        () -> {
          assertThat(job.process().isAlive())
              .as("the job still runs; output in " + job.output())
              .isTrue();
          try {
            return workerStatus(worker);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        status ->
            status.contains("\"" + counter + "\"") && condition.test(Json.number(status, counter)));
  }
}
