package io.faro.bench.cluster;

import static java.util.Objects.requireNonNull;

import io.faro.common.network.HostPort;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Which cluster a benchmark drives. */
public sealed interface ClusterTarget {
  /** A running cluster, reached through its masters. */
  record Running(List<HostPort> masters) implements ClusterTarget {
    public Running {
      masters = List.copyOf(masters);
      if (masters.isEmpty()) {
        throw new IllegalArgumentException("no master endpoints");
      }
    }
  }

  /**
   * A local cluster the benchmark starts (one master and {@code workers} workers, each its own
   * process) and stops at the end.
   *
   * @param workDir where the processes keep logs and data; empty for a temporary directory that is
   *     removed at the end
   */
  record Local(int workers, Optional<Path> workDir) implements ClusterTarget {
    public Local {
      requireNonNull(workDir, "workDir is null");
      if (workers < 1) {
        throw new IllegalArgumentException("--workers must be at least 1, got " + workers);
      }
    }
  }
}
