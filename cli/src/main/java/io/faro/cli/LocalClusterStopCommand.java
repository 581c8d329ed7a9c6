package io.faro.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
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

  /** See {@link LocalCluster#stop}. */
  static int stopAll(Path workDir) throws IOException {
    Path file = workDir.toAbsolutePath().resolve(LocalCluster.CLUSTER_FILE);
    if (!Files.exists(file)) {
      throw new IllegalStateException(
          "no "
              + LocalCluster.CLUSTER_FILE
              + " in "
              + workDir.toAbsolutePath()
              + ": nothing to stop");
    }
    try {
      ClusterFile.markStopped(workDir.toAbsolutePath());
    } catch (IOException e) {
      // Stopped all the same; a launcher in the foreground then exits 1 instead of 0.
    }
    List<Long> pids = ClusterFile.pids(workDir.toAbsolutePath());
    int stopped = 0;
    for (int i = pids.size() - 1; i >= 0; i--) {
      Optional<ProcessHandle> handle = ProcessLauncher.faroProcess(pids.get(i));
      if (handle.isPresent()) {
        ProcessLauncher.stop(handle.get());
        stopped++;
      }
    }
    return stopped;
  }
}
