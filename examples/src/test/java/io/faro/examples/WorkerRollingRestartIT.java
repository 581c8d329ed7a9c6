package io.faro.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import io.faro.common.testing.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rolling restart as an operator runs it: a local cluster of real processes (one master, three
 * workers, started with {@code bin/faro local-cluster --detach}) and a Spark job in its own JVM;
 * while the job runs, each worker is restarted in turn with {@code bin/faro local-cluster restart}
 * (SIGTERM: a graceful stop), two while the maps push, the last while the reducers read. The job
 * must give the built-in shuffle's checksum without a stage re-run or a failed task: the stopped
 * workers sealed what they had acknowledged, and served it again after their restart.
 */
class WorkerRollingRestartIT {
  private static final String SCALE = "0.02";
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(3);
  private static final Pattern UNAVAILABLE = Pattern.compile("serving again (\\d+) ms after");

  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void aJobRunsThroughARollingRestartOfEveryWorkerWithoutAStageRetryOrAFailedTask()
      throws Exception {
    SparkJobRunner runner = new SparkJobRunner(dir);
    String expected =
        Json.string(runner.run("large", "builtin", SCALE, "", "builtin-large"), "checksum");
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
          runner.start(
              "large",
              "faro",
              SCALE,
              masters,
              "rolling",
              List.of(
                  // Maps that push for about half a minute, reducers that read for a quarter.
                  ComparisonJob.MAP_PAUSE_KEY + "=100",
                  ComparisonJob.READ_PAUSE_KEY + "=60",
                  "spark.faro.client.push.batch.size=16k",
                  "spark.faro.client.fetch.prefetch.chunks=1"));

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
