package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import io.faro.examples.CompareJobs;
import io.faro.systemtests.SparkJobRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upgrade users meet: a cluster of the last release (3 masters, 3 workers, authentication on)
 * serves a job of this build's client jar, then runs a Spark job with that release's client jar
 * while {@code bin/faro local-cluster upgrade} rolls every member to this build; the job's answer
 * equals the built-in shuffle's, with no stage run again and no task failed. Then a roll back to
 * the last release works (the cluster is still at feature level 1), the level is raised, a job with
 * this build's client runs, an application with the last release's client jar is refused naming
 * both protocol versions, and a roll back is refused, naming the level.
 */
class UpgradeFromLastReleaseIT {
  /** The last release: this round's starting point (docs/upgrading.md). */
  static final String LAST_RELEASE = "59e6657";

  private static final String SCALE = "0.02";
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(5);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void aClusterOfTheLastReleaseIsRolledToThisOneUnderAJobAndBackOnlyBeforeTheLevelIsRaised()
      throws Exception {
    Path deploy = Path.of(System.getProperty("faro.deploy.dir"));
    EarlierRelease last =
        EarlierRelease.build(
            deploy.getParent(), LAST_RELEASE, deploy.resolve("target").resolve("earlier-releases"));
    Path current = unpack(Path.of(System.getProperty("faro.dist.tarball")));
    Path work = dir.resolve("cluster");
    Path conf = secretsConf(current);

    try {
      Processes.Result started =
          run(
              last.home(),
              "local-cluster",
              "--masters",
              "3",
              "--workers",
              "3",
              "--master-port",
              "0",
              "--detach",
              "--work-dir",
              work.toString(),
              "--conf",
              conf.toString());
      assertThat(started.exitCode()).as(started.output()).isZero();
      String masters =
          Json.string(
              Files.readString(work.resolve("cluster.json")), "spark.faro.master.endpoints");

      // A client of this build against servers of the last release (N against N-1).
      SparkJobRunner newJobs = new SparkJobRunner(dir);
      String expectedNew = Json.string(newJobs.builtin("large", SCALE, List.of()), "checksum");
      String early = newJobs.run("large", "faro", SCALE, masters, "new-client-on-last-release");
      assertThat(Json.string(early, "checksum")).isEqualTo(expectedNew);
      assertThat(Json.number(early, "failed_tasks")).as("failed tasks").isZero();

      SparkJobRunner oldJobs = new SparkJobRunner(dir, last.jars());
      String expected = Json.string(oldJobs.builtin("large", SCALE, List.of()), "checksum");
      SparkJobRunner.Started job =
          oldJobs.start(
              "large",
              "faro",
              SCALE,
              masters,
              "rolled",
              List.of(
                  // Long enough to outlast the roll of six members (about 20 s).
                  CompareJobs.MAP_PAUSE_KEY + "=150",
                  CompareJobs.READ_PAUSE_KEY + "=50",
                  "spark.faro.client.push.batch.size=16k"));
      awaitShuffle(work, job);

      long rollStart = System.currentTimeMillis();
      Processes.Result rolled = upgrade(current, work, current);
      System.out.printf(
          "local-cluster upgrade rolled 3 masters and 3 workers from %s to this build in %d s%n%s",
          LAST_RELEASE, (System.currentTimeMillis() - rollStart) / 1000, rolled.output());
      assertThat(rolled.exitCode()).as(rolled.output()).isZero();
      assertThat(job.process().isAlive()).as("the job still runs when the roll ends").isTrue();
      String result = job.awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
      assertThat(level(current, work)).as("a roll leaves the level as it was").isEqualTo(1);

      // Before the level is raised, every member can go back, and forth again.
      Processes.Result back = upgrade(current, work, last.home());
      assertThat(back.exitCode()).as(back.output()).isZero();
      assertThat(back.output()).contains("a Faro release before feature levels");
      Processes.Result forth = upgrade(current, work, current);
      assertThat(forth.exitCode()).as(forth.output()).isZero();

      Processes.Result raised =
          run(
              current,
              "admin",
              "feature-level",
              "set",
              "2",
              "--endpoints",
              masters,
              "--conf",
              conf.toString());
      assertThat(raised.exitCode()).as(raised.output()).isZero();
      assertThat(level(current, work)).isEqualTo(2);

      String second = newJobs.run("large", "faro", SCALE, masters, "after-raise");
      assertThat(Json.string(second, "checksum")).isEqualTo(expectedNew);

      // An application with the last release's client jar: refused, naming both versions.
      SparkJobRunner.Started refusedJob =
          oldJobs.start(
              "large",
              "faro",
              SCALE,
              masters,
              "old-client-at-level-2",
              List.of("spark.faro.client.fallback.policy=never"));
      assertThat(refusedJob.process().waitFor(3, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
      assertThat(refusedJob.process().exitValue()).isNotZero();
      assertThat(Files.readString(refusedJob.output()))
          .contains("the client speaks Faro wire protocol 1")
          .contains("takes 2 or newer");

      Processes.Result refused = upgrade(current, work, last.home());
      assertThat(refused.exitCode()).as(refused.output()).isEqualTo(1);
      assertThat(refused.output())
          .contains("the cluster runs at feature level 2, which that release does not support")
          .contains("A roll back is possible only before the level is raised");
      // Nothing was stopped: the same processes serve.
      assertThat(level(current, work)).isEqualTo(2);
    } finally {
      if (Files.exists(work.resolve("cluster.json"))) {
        run(current, "local-cluster", "stop", "--work-dir", work.toString());
      }
    }
  }

  /** Waits until the job's shuffle holds slots on the workers (its maps push). */
  private void awaitShuffle(Path work, SparkJobRunner.Started job) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (System.nanoTime() < deadline && job.process().isAlive()) {
      boolean pushed;
      try (var files = Files.walk(work)) {
        pushed =
            files.anyMatch(
                p ->
                    p.toString().contains("/data/")
                        && p.getFileName().toString().startsWith("local-"));
      }
      if (pushed) {
        return;
      }
      Thread.sleep(500);
    }
    assertThat(job.process().isAlive()).as("the job runs when the roll starts").isTrue();
  }

  private Processes.Result upgrade(Path current, Path work, Path to) throws Exception {
    return run(
        current, "local-cluster", "upgrade", "--work-dir", work.toString(), "--to", to.toString());
  }

  /** The cluster's feature level, as this build's tool reads it. */
  private int level(Path current, Path work) throws Exception {
    String masters =
        Json.string(Files.readString(work.resolve("cluster.json")), "spark.faro.master.endpoints");
    Processes.Result shown =
        run(current, "admin", "feature-level", "show", "--json", "--endpoints", masters);
    assertThat(shown.exitCode()).as(shown.output()).isZero();
    return (int)
        Json.number(shown.output().substring(shown.output().indexOf('{')), "feature_level");
  }

  /** Runs {@code home}'s bin/faro with {@code args}. */
  private Processes.Result run(Path home, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin").resolve("faro").toString());
    command.addAll(List.of(args));
    return Processes.run(command, dir, COMMAND_TIMEOUT);
  }

  private Path unpack(Path tarball) throws Exception {
    Path into = Files.createDirectories(dir.resolve("current"));
    Processes.Result untar =
        Processes.run(
            List.of("tar", "-xzf", tarball.toString(), "-C", into.toString()),
            dir,
            Duration.ofMinutes(2));
    assertThat(untar.exitCode()).as(untar.output()).isZero();
    try (var found = Files.list(into)) {
      return found.filter(Files::isDirectory).findFirst().orElseThrow();
    }
  }

  /**
   * Authentication on, as a cluster of the last release ran it in production: secrets made with
   * this build's tool, named in the settings file every member reads.
   */
  private Path secretsConf(Path current) throws Exception {
    Path secrets = Files.createDirectories(dir.resolve("secrets"));
    for (String s : List.of("cluster", "admin")) {
      Processes.Result made =
          run(current, "secret", "--out", secrets.resolve(s + ".secret").toString());
      assertThat(made.exitCode()).as(made.output()).isZero();
    }
    Path conf = dir.resolve("faro.conf");
    Files.writeString(
        conf,
        "faro.auth.enabled=true\n"
            + "faro.auth.cluster.secret.file="
            + secrets.resolve("cluster.secret")
            + "\nfaro.auth.admin.secret.file="
            + secrets.resolve("admin.secret")
            + "\n");
    return conf;
  }
}
