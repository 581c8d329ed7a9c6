package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.testing.Eventually;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `faro local-cluster` in the foreground, as a process of its own, driven from "another shell"
 * (other processes): it exits once its members are gone, 0 after `local-cluster stop`, but not
 * while `local-cluster restart` restarts one of them.
 */
class LocalClusterForegroundTest {
  /** From `local-cluster stop` until the launcher has exited: a worker's graceful stop and more. */
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);

  @TempDir Path tmp;
  private Path dir;
  private Path output;
  private Process launcher;

  @AfterEach
  void stopWhatIsLeft() throws Exception {
    if (launcher != null && launcher.isAlive()) {
      launcher.destroyForcibly();
      launcher.waitFor(10, TimeUnit.SECONDS);
    }
    if (dir != null && Files.exists(dir.resolve(LocalCluster.CLUSTER_FILE))) {
      LocalCluster.stop(dir);
    }
  }

  @Test
  void stopFromAnotherShellEndsTheLauncherWithCode0() throws Exception {
    startLauncher();
    List<Long> pids = ClusterFile.pids(dir);

    // The form the user reported, with --work-dir given to local-cluster too.
    Run stop =
        faro("local-cluster", "--work-dir", dir.toString(), "stop", "--work-dir", dir.toString());

    assertThat(stop.exitCode()).as(stop.output()).isZero();
    assertThat(launcher.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        .as("the launcher exited; its output:\n" + launcherOutput())
        .isTrue();
    assertThat(launcher.exitValue()).as(launcherOutput()).isZero();
    assertThat(launcherOutput())
        .contains(
            "Every member of the local cluster in " + dir + " has stopped (local-cluster stop)")
        .doesNotContain("Stopping the local cluster...");
    assertThat(pids).noneMatch(ProcessLauncher::running);
  }

  @Test
  void aRestartDoesNotEndTheLauncherEvenWhenNothingElseRuns() throws Exception {
    startLauncher();
    // Only the master runs: while it restarts, no member does.
    ClusterFile.Entry worker = entry("worker-0");
    ProcessHandle.of(worker.pid()).orElseThrow().destroyForcibly();
    Eventually.await("worker-0 gone", () -> !ProcessLauncher.running(worker.pid()));
    long oldMaster = entry("master").pid();

    Run restart =
        faro("local-cluster", "restart", "--work-dir", dir.toString(), "--member", "master");

    assertThat(restart.exitCode()).as(restart.output()).isZero();
    long newMaster = entry("master").pid();
    assertThat(newMaster).isNotEqualTo(oldMaster);
    Eventually.await(
        "the launcher noticed the restarted master",
        () -> launcherOutput().contains("master restarted: pid " + newMaster));
    assertThat(launcherOutput())
        .as("the launcher saw nothing run, and waited for the restart")
        .contains("No member of the local cluster runs, but master is being restarted");
    // Longer than the grace period after which a cluster without members ends the launcher.
    assertThat(launcher.waitFor(ForegroundWatch.GRACE.toMillis() + 1000, TimeUnit.MILLISECONDS))
        .as("the launcher exited; its output:\n" + launcherOutput())
        .isFalse();

    Run stop = faro("local-cluster", "stop", "--work-dir", dir.toString());

    assertThat(stop.exitCode()).as(stop.output()).isZero();
    assertThat(launcher.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        .as("the launcher exited; its output:\n" + launcherOutput())
        .isTrue();
    assertThat(launcher.exitValue()).as(launcherOutput()).isZero();
    assertThat(launcherOutput()).contains("master (pid " + newMaster + ") exited");
    assertThat(ProcessLauncher.running(newMaster)).isFalse();
  }

  @Test
  void membersThatAllExitWithoutStopEndTheLauncherWithCode1() throws Exception {
    startLauncher();

    for (long pid : ClusterFile.pids(dir)) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }

    assertThat(launcher.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        .as("the launcher exited; its output:\n" + launcherOutput())
        .isTrue();
    assertThat(launcher.exitValue()).as(launcherOutput()).isEqualTo(1);
    assertThat(launcherOutput()).contains("has exited, without local-cluster stop");
  }

  @Test
  void ctrlCAfterARestartStopsTheRestartedMemberToo() throws Exception {
    startLauncher();
    Run restart =
        faro("local-cluster", "restart", "--work-dir", dir.toString(), "--member", "worker-0");
    assertThat(restart.exitCode()).as(restart.output()).isZero();
    long restarted = entry("worker-0").pid();
    List<Long> pids = ClusterFile.pids(dir);

    // SIGTERM, as Ctrl-C's SIGINT, runs the launcher's shutdown hook.
    launcher.destroy();

    assertThat(launcher.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        .as("the launcher exited; its output:\n" + launcherOutput())
        .isTrue();
    assertThat(launcherOutput()).contains("Stopping the local cluster...");
    assertThat(ProcessLauncher.running(restarted))
        .as("worker-0, restarted by another process, stopped")
        .isFalse();
    assertThat(pids).noneMatch(ProcessLauncher::running);
  }

  /** Starts `faro local-cluster` (one master, one worker) and waits until it runs. */
  private void startLauncher() throws IOException {
    dir = tmp.resolve("cluster");
    output = tmp.resolve("launcher.out");
    launcher =
        new ProcessBuilder(
                java(
                    "local-cluster",
                    "--work-dir",
                    dir.toString(),
                    "--workers",
                    "1",
                    "--master-port",
                    "0"))
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    Eventually.await(
        "the launcher runs; its output:\n" + output,
        Duration.ofSeconds(60),
        () -> {
          if (!launcher.isAlive()) {
            throw new AssertionError("the launcher exited during start:\n" + launcherOutput());
          }
          return launcherOutput().contains("Running; press Ctrl-C to stop");
        });
  }

  private ClusterFile.Entry entry(String name) throws IOException {
    return ClusterFile.entries(dir).stream()
        .filter(e -> e.name().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private String launcherOutput() {
    try {
      return Files.readString(output, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(cannot read " + output + ": " + e + ")";
    }
  }

  private record Run(int exitCode, String output) {}

  /** Runs `faro ARGS` in a JVM of its own, as from another shell, and waits for it. */
  private static Run faro(String... args) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(java(args)).redirectErrorStream(true).start();
    byte[] out = process.getInputStream().readAllBytes();
    assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("faro " + List.of(args)).isTrue();
    return new Run(process.exitValue(), new String(out, StandardCharsets.UTF_8));
  }

  /** {@code java ... FaroCli ARGS} on this JVM's class path, as bin/faro runs it. */
  private static List<String> java(String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:TieredStopAtLevel=1");
    String log4j = System.getProperty("log4j2.configurationFile");
    if (log4j != null) {
      command.add("-Dlog4j2.configurationFile=" + log4j);
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(FaroCli.class.getName());
    command.addAll(List.of(args));
    return command;
  }
}
