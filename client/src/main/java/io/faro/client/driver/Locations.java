package io.faro.client.driver;

import io.faro.client.PartitionPages;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Where the partitions of one generation are: every location any partition ever had (revives and
 * splits add epochs; the commit asks all of them), the current one of each partition (its highest
 * epoch), and the revives in progress, so that tasks asking to move the same partition share one.
 * The current locations are kept per page, made when the page is first placed.
 *
 * <p>Thread-safe: guarded by {@code this}; futures are completed outside the lock.
 */
final class Locations {
  /**
   * What a revive of one partition is answered with: {@code answer}; when {@code mustPlace}, the
   * caller places the partition and ends the revive with {@link #revived}.
   */
  record Revive(CompletableFuture<PartitionLocation> answer, boolean mustPlace) {}

  private final ShuffleId shuffle;
  private final int numPartitions;
  private final PartitionPages pages;
  // @GuardedBy("this"): the current location of each partition, by page (null until placed)
  private final PartitionLocation[][] current;
  private final List<PartitionLocation> all = new ArrayList<>();
  private final Map<Integer, CompletableFuture<PartitionLocation>> reviving = new HashMap<>();

  Locations(ShuffleId shuffle, int numPartitions, PartitionPages pages) {
    this.shuffle = shuffle;
    this.numPartitions = Math.max(0, numPartitions);
    this.pages = pages;
    this.current = new PartitionLocation[pages.count(this.numPartitions)][];
  }

  /** Records reserved locations; a partition's current location is its highest epoch. */
  synchronized void placed(List<PartitionLocation> locations) {
    for (PartitionLocation l : locations) {
      all.add(l);
      int page = pages.page(l.partition());
      if (current[page] == null) {
        current[page] = new PartitionLocation[pages.end(page, numPartitions) - pages.start(page)];
      }
      int i = l.partition() - pages.start(page);
      PartitionLocation known = current[page][i];
      if (known == null || known.epoch() < l.epoch()) {
        current[page][i] = l;
      }
    }
  }

  /** The latest location of every placed partition. */
  List<PartitionLocation> current() {
    return current(0, numPartitions);
  }

  /** The latest location of every placed partition of [start, end). */
  synchronized List<PartitionLocation> current(int start, int end) {
    List<PartitionLocation> result = new ArrayList<>();
    for (int p = Math.max(0, start); p < Math.min(end, numPartitions); p++) {
      PartitionLocation l = current(p);
      if (l != null) {
        result.add(l);
      }
    }
    return result;
  }

  /** The latest location of {@code partition}, or null before placement. */
  synchronized PartitionLocation current(int partition) {
    PartitionLocation[] page = current[pages.page(partition)];
    return page == null ? null : page[partition - pages.start(pages.page(partition))];
  }

  /** Every location ever reserved (all epochs), for the commit. */
  synchronized List<PartitionLocation> all() {
    return List.copyOf(all);
  }

  /**
   * A revive of {@code partition}, whose push to {@code failedEpoch} failed: its current location
   * if that is newer already, the revive in progress if another task asked first, or a new one that
   * the caller must place.
   */
  synchronized Revive revive(int partition, int failedEpoch) {
    if (partition < 0 || partition >= numPartitions) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "partition "
              + partition
              + " outside 0.."
              + (numPartitions - 1)
              + " of shuffle "
              + shuffle);
    }
    PartitionLocation known = current(partition);
    if (known != null && known.epoch() > failedEpoch) {
      return new Revive(CompletableFuture.completedFuture(known), false);
    }
    CompletableFuture<PartitionLocation> inProgress = reviving.get(partition);
    if (inProgress != null) {
      return new Revive(inProgress, false);
    }
    CompletableFuture<PartitionLocation> f = new CompletableFuture<>();
    reviving.put(partition, f);
    return new Revive(f, true);
  }

  /**
   * Ends the revives of {@code partitions}: with {@code error} null the {@code placed} locations
   * are current now and answer them; otherwise each fails with {@code error}.
   */
  void revived(List<Integer> partitions, List<PartitionLocation> placed, Throwable error) {
    Map<Integer, CompletableFuture<PartitionLocation>> ended = new HashMap<>();
    synchronized (this) {
      if (error == null) {
        placed(placed);
      }
      partitions.forEach(p -> ended.put(p, reviving.remove(p)));
    }
    if (error != null) {
      ended.values().forEach(f -> f.completeExceptionally(error));
      return;
    }
    for (PartitionLocation l : placed) {
      ended.get(l.partition()).complete(l);
    }
  }

  /**
   * Every copy (primaries with their replica, replicas on their own) by the worker that holds it.
   */
  static Map<WorkerId, List<PartitionLocation>> copiesByWorker(List<PartitionLocation> locations) {
    Map<WorkerId, List<PartitionLocation>> byWorker = new LinkedHashMap<>();
    for (PartitionLocation l : locations) {
      for (PartitionLocation copy : l.copies()) {
        byWorker.computeIfAbsent(copy.worker(), w -> new ArrayList<>()).add(copy);
      }
    }
    return byWorker;
  }
}
