package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import io.faro.common.testing.Eventually;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three master processes and two workers; a Spark job (SQL join and aggregation, several shuffles,
 * in its own JVM) runs through them while masters are killed with SIGKILL, restarted one by one, or
 * stopped with SIGSTOP. Every run must give the built-in shuffle's checksum: the job never notices
 * the masters.
 */
class MasterFailoverIT {
  private static final String JOB = "sql";
  private static final String SCALE = "0.002";
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

  /** One master's answer to `faro admin masters`; absent when it did not answer. */
  private record MasterView(
      String role, boolean leaderReady, long term, long appliedIndex, long apps, long shuffles) {}

  @TempDir static Path dir;
  private static LocalCluster cluster;
  private static SparkJobRunner runner;
  private static String expectedChecksum;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster =
        LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(2).withMasters(3));
    runner = new SparkJobRunner(dir);
    expectedChecksum = Json.string(runner.builtin(JOB, SCALE, List.of()), "checksum");
    assertThat(expectedChecksum).isNotBlank();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Every test leaves three running masters that agree on one leader. */
  @AfterEach
  void groupIsWholeAgain() throws Exception {
    for (int i = 1; i <= 3; i++) {
      LocalCluster.Member m = cluster.member("master-" + i);
      if (!m.process().isAlive()) {
        cluster.restart(m.name());
      }
    }
    awaitStatus(
        "three masters, one leader, all caught up",
        statuses ->
            statuses.stream().allMatch(Optional::isPresent)
                && statuses.stream().filter(s -> s.get().role().equals("leader")).count() == 1
                && statuses.stream().map(s -> s.get().appliedIndex()).distinct().count() == 1);
  }

  @Test
  void leaderKilledWhileTheJobShuffles() throws Exception {
    SparkJobRunner.Started job =
        runner.start(JOB, "faro", SCALE, cluster.masterEndpoint(), "kill-while-shuffling");
    int leader =
        awaitLeaderWith(
            "the job's first shuffle registered", s -> s.apps() >= 1 && s.shuffles() >= 1);
    assertThat(job.process().isAlive()).as("the job still runs when its leader dies").isTrue();
    long term = status(leader).orElseThrow().term();

    kill(leader);

    assertThat(Json.string(job.awaitResult(), "checksum")).isEqualTo(expectedChecksum);
    int next = awaitLeaderWith("a new leader", s -> true);
    assertThat(next).isNotEqualTo(leader);
    assertThat(status(next).orElseThrow().term()).isGreaterThan(term);
  }

  @Test
  void leaderKilledBeforeTheFirstSlotAllocation() throws Exception {
    SparkJobRunner.Started job =
        runner.start(JOB, "faro", SCALE, cluster.masterEndpoint(), "kill-before-slots");
    int leader = awaitLeaderWith("the job's app registered", s -> s.apps() >= 1);
    assertThat(job.process().isAlive()).as("the job still runs when its leader dies").isTrue();

    kill(leader);

    assertThat(Json.string(job.awaitResult(), "checksum")).isEqualTo(expectedChecksum);
  }

  @Test
  void leaderKilledWhenALaterStageStarts() throws Exception {
    // The second shuffle is registered when its stage starts: the first shuffle's maps have
    // ended and its files were committed, and its reducers read them while the leader dies.
    SparkJobRunner.Started job =
        runner.start(JOB, "faro", SCALE, cluster.masterEndpoint(), "kill-later-stage");
    int leader =
        awaitLeaderWith(
            "the job's second shuffle registered", s -> s.apps() >= 1 && s.shuffles() >= 2);
    assertThat(job.process().isAlive()).as("the job still runs when its leader dies").isTrue();

    kill(leader);

    assertThat(Json.string(job.awaitResult(), "checksum")).isEqualTo(expectedChecksum);
  }

  @Test
  void mastersRestartedOneByOneDuringTheJob() throws Exception {
    SparkJobRunner.Started job =
        runner.start(JOB, "faro", SCALE, cluster.masterEndpoint(), "rolling-restart");
    awaitLeaderWith("the job's app registered", s -> s.apps() >= 1);
    assertThat(job.process().isAlive()).isTrue();
    int restartedWhileRunning = 0;
    for (int i = 1; i <= 3; i++) {
      boolean running = job.process().isAlive();
      cluster.restart("master-" + i);
      restartedWhileRunning += running ? 1 : 0;
      awaitStatus(
          "master-" + i + " back in a group with a leader",
          statuses ->
              statuses.stream().allMatch(Optional::isPresent)
                  && statuses.stream().filter(s -> s.get().role().equals("leader")).count() == 1);
    }

    assertThat(Json.string(job.awaitResult(), "checksum")).isEqualTo(expectedChecksum);
    assertThat(restartedWhileRunning).as("masters restarted while the job ran").isPositive();
  }

  @Test
  void aStoppedFollowerDoesNotStallTheClusterAndCatchesUpWhenResumed() throws Exception {
    int leader = awaitLeaderWith("a leader", s -> true);
    int stopped = (leader + 1) % 3;
    LocalCluster.Member member = cluster.member("master-" + (stopped + 1));
    signal("STOP", member.pid());
    try {
      String result = runner.run(JOB, "faro", SCALE, cluster.masterEndpoint(), "minority-stopped");
      assertThat(Json.string(result, "checksum")).isEqualTo(expectedChecksum);
      assertThat(status(stopped)).as("a stopped master answers nothing").isEmpty();
    } finally {
      signal("CONT", member.pid());
    }
    // The caller's @AfterEach waits for every master, the resumed one too, to reach the same index.
  }

  // ------------------------------------------------------------------ helpers

  private static void kill(int master) throws InterruptedException {
    LocalCluster.Member member = cluster.member("master-" + (master + 1));
    member.process().destroyForcibly(); // SIGKILL
    assertThat(member.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
  }

  private static void signal(String signal, long pid) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0)
        .as("kill -%s %d", signal, pid)
        .isTrue();
  }

  /** Index (0-based) of the leader, once the leader's own status satisfies {@code condition}. */
  private static int awaitLeaderWith(String what, Predicate<MasterView> condition) {
    // Each poll runs `faro admin masters` in a new JVM: no pause needed between them.
    List<Optional<MasterView>> found =
        Eventually.awaitEvery(
            Duration.ZERO,
            what,
            Duration.ofSeconds(60),
            MasterFailoverIT::statuses,
            all -> leaderWith(all, condition) >= 0);
    return leaderWith(found, condition);
  }

  private static int leaderWith(List<Optional<MasterView>> all, Predicate<MasterView> condition) {
    for (int i = 0; i < all.size(); i++) {
      Optional<MasterView> s = all.get(i);
      if (s.isPresent() && s.get().leaderReady() && condition.test(s.get())) {
        return i;
      }
    }
    return -1;
  }

  private static void awaitStatus(String what, Predicate<List<Optional<MasterView>>> condition) {
    // The masters are other processes: their status, polled, is the only signal.
    Eventually.awaitEvery(
        Duration.ofMillis(100),
        what,
        Duration.ofSeconds(60),
        MasterFailoverIT::statuses,
        condition);
  }

  /** Every master's own view, from `faro admin masters --json` run as an operator would. */
  private static List<Optional<MasterView>> statuses() {
    String out;
    try {
      out =
          FaroCommand.run(
                  ADMIN_TIMEOUT,
                  "admin",
                  "masters",
                  "--json",
                  "--timeout",
                  "2s",
                  "--endpoints",
                  cluster.masterEndpoint())
              .output();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    List<Optional<MasterView>> views = new ArrayList<>();
    // One object per master, in --endpoints order, each starting with its "endpoint" field.
    String[] objects = out.split("\"endpoint\"");
    for (int i = 1; i < objects.length; i++) {
      String o = objects[i];
      String role = Json.string(o, "role");
      views.add(
          role == null || role.equals("unreachable")
              ? Optional.empty()
              : Optional.of(
                  new MasterView(
                      role,
                      o.contains("\"leader_ready\": true"),
                      Json.number(o, "term"),
                      Json.number(o, "applied_index"),
                      Json.number(o, "apps"),
                      Json.number(o, "shuffles"))));
    }
    if (views.size() != 3) {
      throw new AssertionError("faro admin masters answered: " + out);
    }
    return views;
  }

  private static Optional<MasterView> status(int master) {
    return statuses().get(master);
  }
}
