package io.faro.cli;

import io.faro.common.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * {@code local-cluster restart}: restarts one member of a local cluster from another process than
 * the one that started it, from what the cluster left on disk (cluster.json, and each member's
 * command and port files).
 */
final class MemberRestart {
  private MemberRestart() {}

  /**
   * A restart done.
   *
   * @param pid the new process
   * @param stoppedMs from the stop signal until the old process was gone (a worker's graceful stop)
   * @param unavailableMs from the stop signal until the new process served (registered)
   */
  record Restarted(long pid, long stoppedMs, long unavailableMs) {}

  /**
   * Restarts member {@code name} of the cluster that {@code <workDir>/cluster.json} describes, from
   * another process than the one that started it ({@code local-cluster restart}): stops it
   * (SIGTERM, then SIGKILL after a grace period; SIGKILL at once with {@code kill}), starts it
   * again with the same command line, storage and ports, waits until it serves, and writes its new
   * pid into cluster.json. A marker beside cluster.json says a restart is under way until then
   * ({@link ClusterFile#restarting}).
   */
  static Restarted restart(Path workDir, String name, boolean kill) throws IOException {
    Path dir = workDir.toAbsolutePath();
    Path file = dir.resolve(LocalCluster.CLUSTER_FILE);
    if (!Files.exists(file)) {
      throw new IllegalStateException(
          "no " + LocalCluster.CLUSTER_FILE + " in " + dir + ": no cluster to restart");
    }
    String json = Files.readString(file);
    List<String> names = Json.strings(json, "name");
    List<Long> pids = Json.numbers(json, "pid");
    int index = names.indexOf(name);
    if (index < 0 || index >= pids.size()) {
      throw new IllegalArgumentException(
          "no member " + name + " in " + file + "; its members are " + names);
    }
    Path home = dir.resolve(name);
    List<String> command = Files.readAllLines(home.resolve(ProcessLauncher.COMMAND_FILE));
    String role = command.contains("worker") ? "worker" : "master";
    Path portFile = home.resolve(ProcessLauncher.PORT_FILE);
    String ports = Files.exists(portFile) ? Files.readString(portFile) : "";
    Optional<ProcessHandle> running = ProcessLauncher.faroProcess(pids.get(index));
    // Until cluster.json names the new process: a foreground launcher that sees no member run in
    // the meantime waits for it instead of taking the cluster for stopped.
    try (ClusterFile.Restarting marker = ClusterFile.restarting(dir, name)) {
      long signalled = System.nanoTime();
      if (running.isPresent()) {
        if (kill) {
          running.get().destroyForcibly();
          ProcessLauncher.awaitExit(running.get(), Duration.ofSeconds(10));
        } else {
          ProcessLauncher.stop(running.get());
        }
      }
      long stopped = System.nanoTime();
      List<String> again = ProcessLauncher.onSamePorts(command, role, ports);
      Files.deleteIfExists(portFile);
      Path log = home.resolve(role + ".log");
      LocalCluster.Member fresh =
          new LocalCluster.Member(
              name, role, ProcessLauncher.start(again, log), portFile, log, "", again);
      ProcessLauncher.awaitPortFile(fresh);
      long serving = System.nanoTime();
      String updated =
          json.replace("\"pid\": " + pids.get(index) + ",", "\"pid\": " + fresh.pid() + ",")
              .replace("\"pid\": " + pids.get(index) + "\n", "\"pid\": " + fresh.pid() + "\n");
      ClusterFile.writeAtomically(file, updated);
      return new Restarted(
          fresh.pid(),
          TimeUnit.NANOSECONDS.toMillis(stopped - signalled),
          TimeUnit.NANOSECONDS.toMillis(serving - signalled));
    }
  }
}
