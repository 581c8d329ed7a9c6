package io.faro.bench.cluster;

import static java.util.Objects.requireNonNull;

import io.faro.cli.LocalCluster;
import io.faro.common.network.HostPort;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The cluster a benchmark drives: a running one, or a local one it started and stops on {@link
 * #close()} (removing its directory too when that was a temporary one).
 */
public final class BenchCluster implements AutoCloseable {
  private final List<HostPort> masters;
  private final int expectedWorkers;
  private final LocalCluster local;
  private final Path temporaryDir;

  private BenchCluster(
      List<HostPort> masters, int expectedWorkers, LocalCluster local, Path temporaryDir) {
    this.masters = List.copyOf(masters);
    this.expectedWorkers = expectedWorkers;
    this.local = local;
    this.temporaryDir = temporaryDir;
  }

  /**
   * Connects to, or starts, the cluster of {@code target}.
   *
   * @param confFile the settings file every process of a local cluster reads first
   */
  public static BenchCluster open(ClusterTarget target, Optional<Path> confFile)
      throws IOException {
    requireNonNull(target, "target is null");
    if (target instanceof ClusterTarget.Running running) {
      return new BenchCluster(running.masters(), 0, null, null);
    }
    ClusterTarget.Local spec = (ClusterTarget.Local) target;
    Path temporary = spec.workDir().isPresent() ? null : Files.createTempDirectory("faro-bench-");
    Path workDir = spec.workDir().orElse(temporary);
    try {
      LocalCluster cluster =
          LocalCluster.start(
              workDir,
              LocalCluster.Options.workers(spec.workers()).withConf(confFile.orElse(null)));
      return new BenchCluster(
          List.of(HostPort.parse(cluster.masterEndpoint())), spec.workers(), cluster, temporary);
    } catch (IOException | RuntimeException e) {
      if (temporary != null) {
        deleteRecursively(temporary);
      }
      throw e;
    }
  }

  public List<HostPort> masters() {
    return masters;
  }

  /** Workers the benchmark should wait for: those it started, or 0 for a running cluster (any). */
  public int expectedWorkers() {
    return expectedWorkers;
  }

  public String describe() {
    if (local == null) {
      return "running cluster, masters " + masters;
    }
    return "local cluster (1 master, "
        + expectedWorkers
        + (expectedWorkers == 1 ? " worker" : " workers")
        + ") in "
        + local.workDir();
  }

  /** Stops the processes of a local cluster; a running cluster is left alone. */
  @Override
  public void close() {
    if (local != null) {
      local.close();
    }
    if (temporaryDir != null) {
      deleteRecursively(temporaryDir);
    }
  }

  private static void deleteRecursively(Path root) {
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot remove the benchmark's temporary directory " + root, e);
    }
  }
}
