package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import io.faro.common.testing.Eventually;
import io.faro.examples.CompareJobs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Workers leaving while a Spark job (its own JVM) runs on a local cluster of real processes (one
 * master, three workers):
 *
 * <ul>
 *   <li>a rolling restart as an operator runs it: the cluster started with {@code bin/faro
 *       local-cluster --detach}, each worker restarted in turn with {@code bin/faro local-cluster
 *       restart} (SIGTERM: a graceful stop), two while the maps push, the last while the reducers
 *       read;
 *   <li>a decommission ({@code bin/faro admin decommission-worker}) while the maps push: the worker
 *       drains and exits 0 once the job's shuffles are gone.
 * </ul>
 *
 * The job must give the built-in shuffle's checksum without a stage re-run or a failed task: the
 * stopped workers sealed what they had acknowledged and served it again after their restart, the
 * drained one served its data until nobody needed it.
 */
class WorkerRollingRestartIT {
  private static final String SCALE = "0.02";
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(3);
  private static final Pattern UNAVAILABLE = Pattern.compile("serving again (\\d+) ms after");

  /** Maps that push for about half a minute, reducers that read for a quarter. */
  private static final List<String> SLOW_JOB =
      List.of(
          CompareJobs.MAP_PAUSE_KEY + "=100",
          CompareJobs.READ_PAUSE_KEY + "=60",
          "spark.faro.client.push.batch.size=16k",
          "spark.faro.client.fetch.prefetch.chunks=1");

  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
  static Path shared;

  private static SparkJobRunner runner;
  private static String expected;

  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
  Path dir;

  @BeforeAll
  static void builtinResult() throws Exception {
    runner = new SparkJobRunner(shared);
    expected = Json.string(runner.builtin("large", SCALE, List.of()), "checksum");
  }

  @Test
  void aJobRunsThroughARollingRestartOfEveryWorkerWithoutAStageRetryOrAFailedTask()
      throws Exception {
    Path work = dir.resolve("cluster");
    Path conf = dir.resolve("faro.conf");
    // Small chunks: reducers fetch many, so the last restart catches them mid-read.
    Files.writeString(conf, "faro.worker.chunk.size=256k\n");
    run(
        "local-cluster",
        "--workers",
        "3",
        "--master-port",
        "0",
        "--work-dir",
        work.toString(),
        "--conf",
        conf.toString(),
        "--detach");
    try {
      String masters =
          Json.string(
              Files.readString(work.resolve(LocalCluster.CLUSTER_FILE)),
              "spark.faro.master.endpoints");
      SparkJobRunner.Started job =
          runner.start("large", "faro", SCALE, masters, "rolling", SLOW_JOB);

      List<Long> unavailableMs = new ArrayList<>();
      List<Long> restoredSealed = new ArrayList<>();
      int restartedWhileRunning = 0;
      for (int w = 0; w < 3; w++) {
        String member = "worker-" + w;
        // The first two while their partitions take pushes, the last while reducers fetch.
        awaitCounter(work, member, w < 2 ? "appended_bytes" : "fetched_chunks", v -> v > 0, job);
        restartedWhileRunning += job.process().isAlive() ? 1 : 0;
        String out =
            run("local-cluster", "restart", "--work-dir", work.toString(), "--member", member);
        Matcher m = UNAVAILABLE.matcher(out);
        assertThat(m.find()).as(out).isTrue();
        unavailableMs.add(Long.parseLong(m.group(1)));
        // The restarted worker took back what it sealed on its way out, committed or not.
        restoredSealed.add(counter(work, member, "restored_sealed_locations"));
      }

      String result = job.awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
      assertThat(restartedWhileRunning).as("workers restarted while the job ran").isEqualTo(3);
      // The restarts while maps pushed hit open partitions: those workers sealed them, and served
      // them after their restart (had they not, those partitions would have been lost: a retry).
      assertThat(restoredSealed.subList(0, 2))
          .as("sealed locations taken back by worker-0 and worker-1")
          .allMatch(n -> n > 0);
      System.out.println(
          "Rolling restart: each worker unavailable for "
              + unavailableMs
              + " ms; sealed locations taken back "
              + restoredSealed);
    } finally {
      run("local-cluster", "stop", "--work-dir", work.toString());
    }
  }

  @Test
  void aWorkerDecommissionedDuringAJobDrainsAndExitsZeroOnceTheJobsShufflesAreGone()
      throws Exception {
    Path conf = dir.resolve("faro.conf");
    // Frequent heartbeats: the drain's end (no shuffle held) is told at the next one.
    Files.writeString(conf, "faro.worker.heartbeat.interval=1s\n");
    try (LocalCluster cluster =
        LocalCluster.start(
            dir.resolve("cluster"), LocalCluster.Options.workers(3).withConf(conf))) {
      SparkJobRunner.Started job =
          runner.start("large", "faro", SCALE, cluster.masterEndpoint(), "drained", SLOW_JOB);
      LocalCluster.Member worker = cluster.member("worker-1");
      String id = Json.string(worker.ports(), "workerId");
      awaitCounter(dir.resolve("cluster"), "worker-1", "appended_bytes", v -> v > 0, job);

      run(
          "admin",
          "decommission-worker",
          "--id",
          id,
          "--reason",
          "retiring the machine",
          "--endpoints",
          cluster.masterEndpoint(),
          // An operator's change: it proves the admin secret local-cluster made.
          "--conf",
          cluster.adminConf().orElseThrow().toString());
      Eventually.awaitEvery(
          Duration.ofMillis(200),
          "worker-1 listed as draining",
          Duration.ofSeconds(60),
          () -> workerRow(cluster.masterEndpoint(), id),
          row -> row.contains("\"state\": \"draining\""));
      assertThat(job.process().isAlive()).as("the job runs while the worker drains").isTrue();

      String result = job.awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
      // The job ended, its app went, the masters expired its shuffles: the worker exits, 0.
      assertThat(worker.process().waitFor(60, TimeUnit.SECONDS)).as("worker-1 exited").isTrue();
      assertThat(worker.process().exitValue()).isZero();
      assertThat(workerRow(cluster.masterEndpoint(), id))
          .contains("\"admission\": \"decommissioned\"");
      for (String other : List.of("worker-0", "worker-2")) {
        assertThat(cluster.member(other).process().isAlive()).as(other).isTrue();
      }
    }
  }

  /** {@code id}'s entry in `bin/faro admin workers --json`. */
  private static String workerRow(String masters, String id) {
    try {
      String out = run("admin", "workers", "--json", "--endpoints", masters);
      int at = out.indexOf("\"id\": \"" + id + "\"");
      return at < 0 ? "" : out.substring(at, Math.max(at, out.indexOf('}', at)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Runs {@code bin/faro ARGS}; it must succeed. Returns its output. */
  private static String run(String... args) throws Exception {
    FaroCommand.CommandResult r = FaroCommand.run(COMMAND_TIMEOUT, args);
    assertThat(r.exitCode()).as("faro %s: %s", String.join(" ", args), r.output()).isZero();
    return r.output();
  }

  /** {@code member}'s status counter {@code counter}; -1 when it does not answer. */
  private static long counter(Path work, String member, String counter) {
    try {
      String ports = Files.readString(work.resolve(member).resolve("ports.json"));
      FaroCommand.CommandResult r =
          FaroCommand.run(
              COMMAND_TIMEOUT,
              "admin",
              "worker-status",
              "--worker",
              "127.0.0.1:" + Json.number(ports, "rpcPort"),
              "--timeout",
              "5s");
      return r.exitCode() == 0 ? Json.number(r.output(), counter) : -1L;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Waits until {@code member}'s status counter satisfies {@code condition}, while the job runs.
   */
  private static void awaitCounter(
      Path work,
      String member,
      String counter,
      LongPredicate condition,
      SparkJobRunner.Started job) {
    Eventually.awaitEvery(
        Duration.ofMillis(200),
        member + " " + counter + " while the job runs",
        Duration.ofSeconds(90),
        () -> {
          if (!job.process().isAlive()) {
            throw new AssertionError("the job ended before " + member + " was restarted");
          }
          return counter(work, member, counter);
        },
        condition::test);
  }
}
