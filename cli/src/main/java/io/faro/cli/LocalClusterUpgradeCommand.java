package io.faro.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code faro local-cluster upgrade --work-dir DIR --to DIST_DIR [--member NAME]}. */
@Command(
    name = "upgrade",
    mixinStandardHelpOptions = true,
    description = {
      "Rolls the members of the local cluster in <work-dir> to the Faro distribution in",
      "DIST_DIR (an unpacked release: bin/faro, lib/, conf/), as an operator rolls a fleet:",
      "masters first (the followers, then the leader once it handed leadership to an",
      "upgraded follower), each caught up with its group before the next stops; then the",
      "workers one at a time, each stopped gracefully (SIGTERM: it seals its open files)",
      "and serving again before the next. Jobs keep running through it.",
      "Refused before any member stops when DIST_DIR's release does not support the",
      "cluster's feature level (a roll back after `bin/faro admin feature-level set`).",
      "The roll leaves the feature level as it was: raise it once the release is to stay."
    })
final class LocalClusterUpgradeCommand implements Callable<Integer> {
  @Option(names = "--work-dir", required = true, description = "The work directory of the cluster.")
  Path workDir;

  @Option(
      names = "--to",
      required = true,
      paramLabel = "DIST_DIR",
      description = "The unpacked distribution to roll to (the directory holding bin/faro).")
  Path to;

  @Option(
      names = "--member",
      paramLabel = "NAME",
      description = "Roll only this member, named as in cluster.json (master-2, worker-0).")
  String member;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (LocalClusterCommand.refusedWorkDir(spec, "upgrade", workDir)) {
      return 2;
    }
    PrintWriter out = spec.commandLine().getOut();
    try {
      ClusterUpgrade.Target target = ClusterUpgrade.Target.of(to.toAbsolutePath().normalize());
      new ClusterUpgrade(workDir, target, out).run(member);
    } catch (IllegalArgumentException | IllegalStateException e) {
      spec.commandLine().getErr().println("faro local-cluster upgrade: " + e.getMessage());
      spec.commandLine().getErr().flush();
      return 1;
    }
    return 0;
  }
}
