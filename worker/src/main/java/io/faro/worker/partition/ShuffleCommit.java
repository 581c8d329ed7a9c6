package io.faro.worker.partition;

import java.util.List;

/** The outcome of committing a shuffle on this worker: every partition location it held. */
public record ShuffleCommit(
    List<PartitionCommit.Committed> committed, List<PartitionCommit.Failed> failed) {
  public ShuffleCommit {
    committed = List.copyOf(committed);
    failed = List.copyOf(failed);
  }

  public static ShuffleCommit empty() {
    return new ShuffleCommit(List.of(), List.of());
  }
}
