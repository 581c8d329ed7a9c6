package io.faro.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code faro local-cluster stop --work-dir DIR}. */
@Command(
    name = "stop",
    mixinStandardHelpOptions = true,
    description = "Stops the local cluster described by <work-dir>/cluster.json.")
final class LocalClusterStopCommand implements Callable<Integer> {
  @Option(names = "--work-dir", required = true, description = "The work directory of the cluster.")
  Path workDir;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (LocalClusterCommand.refusedWorkDir(spec, "stop", workDir)) {
      return 2;
    }
    int n = LocalCluster.stop(workDir);
    System.out.println("Stopped " + n + " Faro process(es) of " + workDir.toAbsolutePath());
    return 0;
  }
}
