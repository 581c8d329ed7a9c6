package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.PartitionPages;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BinaryOperator;
import java.util.stream.IntStream;

/**
 * Where each partition of one shuffle generation takes pushes, shared by an executor's tasks: a
 * revive by one task moves the partition for all. Kept per page ({@link PartitionPages}); a page is
 * asked of the lifecycle manager when a task first pushes to one of its partitions (which places it
 * there), on that task's thread, once per executor. Thread-safe.
 */
public final class Targets {
  /** Asks the lifecycle manager for the locations of partitions [start, end). */
  @FunctionalInterface
  public interface PageSource {
    CompletableFuture<List<PartitionLocation>> locations(int start, int end);
  }

  private final ShuffleId shuffle;
  private final int numPartitions;
  private final PartitionPages pages;
  private final PageSource source;

  /** The longest a task waits for a page: the ask carries its own timeout, this guards it. */
  private final Duration backstop;

  /** Each page's locations, once asked; a failed ask is cleared, for the next task to ask again. */
  private final AtomicReferenceArray<CompletableFuture<AtomicReferenceArray<PartitionLocation>>>
      loaded;

  /**
   * @param backstop the longest a task waits for a page (its ask has a timeout of its own)
   */
  public Targets(
      ShuffleId shuffle,
      int numPartitions,
      PartitionPages pages,
      PageSource source,
      Duration backstop) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.numPartitions = numPartitions;
    this.pages = requireNonNull(pages, "pages is null");
    this.source = requireNonNull(source, "source is null");
    this.backstop = requireNonNull(backstop, "backstop is null");
    this.loaded = new AtomicReferenceArray<>(pages.count(numPartitions));
  }

  /** Targets of known {@code locations}, one page; asking for a partition without one fails. */
  public static Targets of(
      ShuffleId shuffle, List<PartitionLocation> locations, int numPartitions) {
    Targets t =
        new Targets(
            shuffle,
            numPartitions,
            new PartitionPages(Math.max(1, numPartitions)),
            (start, end) -> CompletableFuture.completedFuture(List.of()),
            Duration.ZERO);
    t.known(0, numPartitions, locations);
    return t;
  }

  /**
   * Records the locations of partitions [start, end), a range of whole pages, as asked already (the
   * first ask of a one-page shuffle answers them with the generation).
   */
  public void known(int start, int end, List<PartitionLocation> locations) {
    if (start >= end) {
      return;
    }
    for (int page = pages.page(start); page <= pages.page(end - 1); page++) {
      loaded.compareAndSet(page, null, CompletableFuture.completedFuture(pageOf(page, locations)));
    }
  }

  public int numPartitions() {
    return numPartitions;
  }

  /**
   * The current location of {@code partition}; asks the lifecycle manager for its page first if
   * this executor has not yet.
   *
   * @throws FaroException when the ask fails, or the page has no location for the partition
   */
  public PartitionLocation get(int partition) {
    PartitionLocation l = page(partition).get(partition - pages.start(pages.page(partition)));
    if (l == null) {
      throw new FaroException(
          ErrorCode.INTERNAL, "shuffle " + shuffle + " has no location for partition " + partition);
    }
    return l;
  }

  /**
   * Moves {@code partition} to {@code next} if {@code merge} says so; as {@link
   * AtomicReferenceArray#accumulateAndGet}.
   */
  PartitionLocation accumulateAndGet(
      int partition, PartitionLocation next, BinaryOperator<PartitionLocation> merge) {
    return page(partition)
        .accumulateAndGet(partition - pages.start(pages.page(partition)), next, merge);
  }

  private AtomicReferenceArray<PartitionLocation> page(int partition) {
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
    int page = pages.page(partition);
    CompletableFuture<AtomicReferenceArray<PartitionLocation>> f = load(page);
    // Shared by the executor's tasks: waited for, never cancelled by one of them.
    try {
      return f.get(backstop.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaroException(
          ErrorCode.INTERNAL, "interrupted while asking for locations of shuffle " + shuffle, e);
    } catch (TimeoutException e) {
      throw new FaroException(
          ErrorCode.TIMEOUT,
          "no locations of partitions "
              + pages.start(page)
              + ".."
              + (pages.end(page, numPartitions) - 1)
              + " of shuffle "
              + shuffle
              + " within "
              + backstop.toMillis()
              + " ms");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new FaroException(
          ErrorCode.INTERNAL, "asking for locations of shuffle " + shuffle + " failed", e);
    }
  }

  /**
   * Starts asking for the pages of {@code partitions} that this executor has not asked for yet, all
   * at once, without waiting: a task about to push to partitions of many pages waits for the
   * slowest page, not for the sum of them.
   */
  public void prefetch(IntStream partitions) {
    partitions
        .filter(p -> p >= 0 && p < numPartitions)
        .map(pages::page)
        .distinct()
        .filter(page -> loaded.get(page) == null)
        .forEach(this::load);
  }

  /** The ask for {@code page}: the one under way or done, or a new one. */
  private CompletableFuture<AtomicReferenceArray<PartitionLocation>> load(int page) {
    CompletableFuture<AtomicReferenceArray<PartitionLocation>> f;
    while ((f = loaded.get(page)) == null) {
      CompletableFuture<AtomicReferenceArray<PartitionLocation>> mine = new CompletableFuture<>();
      if (loaded.compareAndSet(page, null, mine)) {
        CompletableFuture<List<PartitionLocation>> asked;
        try {
          asked = source.locations(pages.start(page), pages.end(page, numPartitions));
        } catch (RuntimeException e) {
          asked = CompletableFuture.failedFuture(e);
        }
        asked.whenComplete(
            (locations, error) -> {
              if (error != null) {
                loaded.compareAndSet(page, mine, null); // the next task asks again
                mine.completeExceptionally(error);
              } else {
                mine.complete(pageOf(page, locations));
              }
            });
        return mine;
      }
    }
    return f;
  }

  private AtomicReferenceArray<PartitionLocation> pageOf(
      int page, List<PartitionLocation> locations) {
    int start = pages.start(page);
    int end = pages.end(page, numPartitions);
    AtomicReferenceArray<PartitionLocation> a = new AtomicReferenceArray<>(end - start);
    for (PartitionLocation l : locations) {
      if (l.partition() >= start && l.partition() < end) {
        a.set(l.partition() - start, l);
      }
    }
    return a;
  }
}
