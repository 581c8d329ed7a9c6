package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The outcome of committing a shuffle on this worker: every partition location it held, in {@code
 * committed} (those that received data, or were restored), {@code failed}, or {@code empty} (those
 * that received nothing: no file and no object each).
 */
public record ShuffleCommit(
    List<PartitionCommit.Committed> committed,
    List<PartitionCommit.Failed> failed,
    LocationKeys empty) {
  public ShuffleCommit {
    committed = List.copyOf(committed);
    failed = List.copyOf(failed);
    requireNonNull(empty, "empty is null");
  }

  public ShuffleCommit(
      List<PartitionCommit.Committed> committed, List<PartitionCommit.Failed> failed) {
    this(committed, failed, LocationKeys.NONE);
  }

  /** Locations it held: committed, failed or empty. */
  public int locations() {
    return committed.size() + failed.size() + empty.size();
  }

  private static final Comparator<PartitionKey> KEY_ORDER =
      Comparator.comparingInt(PartitionKey::partition).thenComparingInt(PartitionKey::epoch);

  public static ShuffleCommit nothing() {
    return new ShuffleCommit(List.of(), List.of());
  }

  /** The outcomes of {@code parts}, each list in (partition, epoch) order; all must be done. */
  static ShuffleCommit collect(List<CompletableFuture<PartitionCommit>> parts) {
    return collect(parts, List.of(), LocationKeys.NONE);
  }

  /**
   * As {@link #collect(List)}, with {@code known}, locations committed already (restored), and
   * {@code empty}, those that received nothing.
   */
  static ShuffleCommit collect(
      List<CompletableFuture<PartitionCommit>> parts,
      List<PartitionCommit.Committed> known,
      LocationKeys empty) {
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
    return new ShuffleCommit(committed, failed, empty);
  }
}
