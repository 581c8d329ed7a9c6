package io.faro.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code faro local-cluster restart --work-dir DIR --member NAME [--kill]}. */
@Command(
    name = "restart",
    mixinStandardHelpOptions = true,
    description = {
      "Restarts one member of the local cluster in <work-dir> (named as in",
      "cluster.json, e.g. worker-1): stops it (SIGTERM; SIGKILL with --kill), starts",
      "it again with the same id, ports and directories, and returns once it serves.",
      "On SIGTERM a worker stops gracefully: it seals its open files, so that the",
      "restarted worker serves what it had acknowledged, committed or not.",
      "Prints how long the member took to stop and how long it was unavailable."
    })
final class LocalClusterRestartCommand implements Callable<Integer> {
  @Option(names = "--work-dir", required = true, description = "The work directory of the cluster.")
  Path workDir;

  @Option(
      names = "--member",
      required = true,
      description = "The member to restart, named as in cluster.json (master, master-2, worker-0).")
  String member;

  @Option(names = "--kill", description = "Stop it with SIGKILL, as a crash would.")
  boolean kill;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (LocalClusterCommand.refusedWorkDir(spec, "restart", workDir)) {
      return 2;
    }
    MemberRestart.Restarted restarted;
    try {
      restarted = MemberRestart.restart(workDir, member, kill);
    } catch (IllegalArgumentException | IllegalStateException e) {
      spec.commandLine().getErr().println("faro local-cluster restart: " + e.getMessage());
      spec.commandLine().getErr().flush();
      return 1;
    }
    System.out.printf(
        "Restarted %s of %s (pid %d): stopped in %d ms, serving again %d ms after the %s%n",
        member,
        workDir.toAbsolutePath(),
        restarted.pid(),
        restarted.stoppedMs(),
        restarted.unavailableMs(),
        kill ? "SIGKILL" : "SIGTERM");
    return 0;
  }
}
