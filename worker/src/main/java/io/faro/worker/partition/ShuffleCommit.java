package io.faro.worker.partition;

import io.faro.common.id.PartitionKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The outcome of committing a shuffle on this worker: every partition location it held. */
public record ShuffleCommit(
    List<PartitionCommit.Committed> committed, List<PartitionCommit.Failed> failed) {
  public ShuffleCommit {
    committed = List.copyOf(committed);
    failed = List.copyOf(failed);
  }

  private static final Comparator<PartitionKey> KEY_ORDER =
      Comparator.comparingInt(PartitionKey::partition).thenComparingInt(PartitionKey::epoch);

  public static ShuffleCommit empty() {
    return new ShuffleCommit(List.of(), List.of());
  }

  /** The outcomes of {@code parts}, each list in (partition, epoch) order; all must be done. */
  static ShuffleCommit collect(List<CompletableFuture<PartitionCommit>> parts) {
    return collect(parts, List.of());
  }

  /**
   * As {@link #collect(List)}, with {@code known}: locations committed already (restored, or idle
   * ones answered empty).
   */
  static ShuffleCommit collect(
      List<CompletableFuture<PartitionCommit>> parts, List<PartitionCommit.Committed> known) {
    List<PartitionCommit.Committed> committed = new ArrayList<>(parts.size() + known.size());
    committed.addAll(known);
    List<PartitionCommit.Failed> failed = new ArrayList<>();
    for (CompletableFuture<PartitionCommit> part : parts) {
      PartitionCommit outcome = part.join();
      if (outcome instanceof PartitionCommit.Committed c) {
        committed.add(c);
      } else if (outcome instanceof PartitionCommit.Failed f) {
        failed.add(f);
      }
    }
    committed.sort(Comparator.comparing(PartitionCommit.Committed::key, KEY_ORDER));
    failed.sort(Comparator.comparing(PartitionCommit.Failed::key, KEY_ORDER));
    return new ShuffleCommit(committed, failed);
  }
}
