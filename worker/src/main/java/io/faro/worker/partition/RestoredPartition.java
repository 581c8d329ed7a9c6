package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

/**
 * A partition location committed by an earlier run of this worker, found intact at start: served
 * again as it was committed, from the disk at {@code diskIndex}.
 */
public record RestoredPartition(int diskIndex, PartitionCommit.Committed commit) {
  public RestoredPartition {
    requireNonNull(commit, "commit is null");
  }
}
