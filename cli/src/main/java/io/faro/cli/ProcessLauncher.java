package io.faro.cli;

import io.faro.common.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Starts and stops the processes of a local cluster: each a JVM running {@code bin/faro ROLE} from
 * this JVM's class path, logging to a file, and telling its ports through a port file it writes
 * once it listens (the handshake {@link #awaitPortFile} waits for). Processes carry a marker on
 * their command line, so that a stop never signals a process that reused a pid.
 */
final class ProcessLauncher {
  static final String MAIN_CLASS = FaroCli.class.getName();

  /** In each member's directory: its command line, one argument per line. */
  static final String COMMAND_FILE = "command";

  /** In each member's directory: the port file it writes once it serves. */
  static final String PORT_FILE = "ports.json";

  private static final String PROCESS_MARKER = "faro.launcher=local-cluster";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  // Above a worker's default faro.worker.graceful.timeout (60 s): SIGTERM seals its open files.
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(90);

  private ProcessLauncher() {}

  static LocalCluster.Member launch(
      Path dir, String name, String role, Path confFile, List<String> settings) throws IOException {
    Path home = Files.createDirectories(dir.resolve(name));
    Path portFile = home.resolve(PORT_FILE);
    Files.deleteIfExists(portFile);
    Path log = home.resolve(role + ".log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // First, so that it survives the truncation of long command lines in /proc: `stop` uses it
    // to tell our processes from others that reused a pid.
    command.add("-D" + PROCESS_MARKER);
    // A small initial heap: the JVM gives back heap it grew under a burst only down to -Xms, so
    // with the default (1/64 of the machine's memory) a process's resident memory never returns
    // to its working level after a burst of garbage.
    command.add("-Xms64m");
    command.add("-Xmx1g");
    if (role.equals("worker")) {
      // Pushed data waits in direct memory; the worker's budget is a share of this limit.
      command.add("-XX:MaxDirectMemorySize=2g");
    }
    command.add("-XX:+ExitOnOutOfMemoryError");
    for (String property :
        List.of("faro.home", "log4j2.configurationFile", "io.netty.leakDetection.level")) {
      String value = System.getProperty(property);
      if (value != null) {
        command.add("-D" + property + "=" + value);
      }
    }
    // No faro.log.dir: the process logs to stdout, which goes to its log file below, so every
    // line is written once (conf/log4j2.xml would otherwise write a rolling file beside it).
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(MAIN_CLASS);
    command.add(role);
    command.add("--port-file");
    command.add(portFile.toString());
    if (confFile != null) {
      command.add("--conf");
      command.add(confFile.toAbsolutePath().toString());
    }
    for (String s : settings) {
      command.add("--set");
      command.add(s);
    }
    // Kept beside the member's log, so that `local-cluster restart` (another process) can start
    // it again as it was.
    Files.write(home.resolve(COMMAND_FILE), command);
    return new LocalCluster.Member(
        name, role, start(command, log), portFile, log, "", List.copyOf(command));
  }

  /** Settings of each role whose 0 (a free port) a restart replaces with the port it got. */
  private static final Map<String, Map<String, String>> PORT_KEYS =
      Map.of(
          "worker",
          Map.of(
              "faro.worker.rpc.port", "rpcPort",
              "faro.worker.push.port", "pushPort",
              "faro.worker.fetch.port", "fetchPort",
              "faro.worker.http.port", "httpPort"),
          "master",
          Map.of(
              "faro.master.port", "rpcPort",
              "faro.master.raft.port", "raftPort",
              "faro.master.http.port", "httpPort"));

  /**
   * {@code command} with each {@code --set KEY=0} port setting of {@code role} replaced by the port
   * {@code ports} (the member's port file) reports for it.
   */
  static List<String> onSamePorts(List<String> command, String role, String ports) {
    Map<String, String> keys = PORT_KEYS.getOrDefault(role, Map.of());
    List<String> result = new ArrayList<>(command.size());
    for (String arg : command) {
      int eq = arg.indexOf('=');
      String field = eq < 0 ? null : keys.get(arg.substring(0, eq));
      long port = field == null ? -1 : Json.number(ports, field);
      if (field != null && arg.substring(eq + 1).equals("0") && port > 0) {
        result.add(arg.substring(0, eq + 1) + port);
      } else {
        result.add(arg);
      }
    }
    return result;
  }

  static Process start(List<String> command, Path log) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    // As bin/faro: glibc's malloc arenas per thread (Netty, Ratis and JIT threads) otherwise keep
    // tens of MB of resident memory that no collection gives back.
    builder.environment().putIfAbsent("MALLOC_ARENA_MAX", "4");
    // A fixed mmap threshold: glibc otherwise raises it to the size of the last large block freed,
    // and the direct-buffer chunks Netty frees (4 MiB) then stay resident in its arenas.
    builder.environment().putIfAbsent("MALLOC_MMAP_THRESHOLD_", "131072");
    return builder.start();
  }

  /** Waits until the process has written its port file; returns its text. */
  static String awaitPortFile(LocalCluster.Member member) throws IOException {
    Path file = member.portFile();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.exists(file)) {
        return Files.readString(file);
      }
      if (!member.process().isAlive()) {
        throw new IllegalStateException(
            member.name()
                + " exited with code "
                + member.process().exitValue()
                + " during start; its log "
                + member.log()
                + " ends with:\n"
                + tail(member.log(), 30));
      }
      try {
        // Polls a file another process writes: there is no event to wait on.
        member.process().waitFor(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while starting " + member.name());
      }
    }
    throw new IllegalStateException(
        member.name()
            + " did not start within "
            + START_TIMEOUT.toSeconds()
            + "s; see "
            + member.log()
            + ":\n"
            + tail(member.log(), 30));
  }

  static String tail(Path log, int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  /** The process {@code pid} if it is alive and is a Faro process (pids get reused). */
  static Optional<ProcessHandle> faroProcess(long pid) {
    return ProcessHandle.of(pid)
        .filter(ProcessHandle::isAlive)
        .filter(h -> h.info().commandLine().map(c -> c.contains(PROCESS_MARKER)).orElse(true));
  }

  /**
   * Whether the Faro process {@code pid} still runs: alive, and not a zombie that exited and waits
   * to be reaped (by init, when no process of ours is its parent).
   */
  static boolean running(long pid) {
    return faroProcess(pid).isPresent() && !zombie(pid);
  }

  /** SIGTERM, then SIGKILL if it is still alive after a grace period. */
  static void stop(ProcessHandle handle) {
    if (!handle.isAlive()) {
      return;
    }
    handle.destroy();
    if (!awaitExit(handle, STOP_TIMEOUT)) {
      handle.destroyForcibly();
      awaitExit(handle, Duration.ofSeconds(10));
    }
  }

  /**
   * Whether {@code handle} exited within {@code timeout}. A process that exited but was not reaped
   * yet (a zombie: its parent is gone, and init reaps it when it gets to it, a second or two later
   * on some machines) counts as exited: it holds no port and no file any more, and the restart's
   * measure of unavailability must not include the reaper's delay.
   */
  static boolean awaitExit(ProcessHandle handle, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    if (handle.parent().map(p -> p.pid() == ProcessHandle.current().pid()).orElse(false)) {
      // This JVM's child: its reaper sees the exit at once.
      try {
        handle.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return true;
      } catch (TimeoutException e) {
        return false;
      } catch (ExecutionException e) {
        return !handle.isAlive();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    while (handle.isAlive() && !zombie(handle.pid())) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      try {
        // Another process's state in /proc: nothing to wait on but the next look (onExit of a
        // process that is not our child polls too, and takes a zombie for alive).
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  private static boolean zombie(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // pid (comm) state ...: comm may hold spaces and parentheses, the state follows the last ')'.
      int end = stat.lastIndexOf(')');
      return end > 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'Z';
    } catch (IOException | RuntimeException e) {
      return false; // not Linux, or gone: isAlive says which
    }
  }
}
