package io.faro.client;

import static java.util.Objects.requireNonNull;

import io.faro.client.fetch.PartitionReader;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.client.protocol.ExecutorProto;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The reduce tasks' side of an executor: the committed files a reading stage attempt reads (asked
 * page by page, each page once per executor and stage attempt, all of the one generation the first
 * answer pinned), the readers, and the report of lost data, after which the stage attempts that
 * read the lost generation ask again. Thread-safe.
 */
final class ReaderSide {
  private record ReaderKey(EngineShuffleId engineShuffle, long readerStage) {}

  /**
   * The file groups one reading stage attempt asked for, by range of partitions, all of one
   * generation: the first answer pins it, and every later ask names it.
   */
  private static final class ReaderPages {
    final AtomicReference<Integer> generation = new AtomicReference<>();
    final AnswerCache<Long, ReducerFileGroups> ranges;

    ReaderPages(Duration backstop) {
      this.ranges = new AnswerCache<>(backstop);
    }
  }

  private final ClientPool pool;
  private final ClientSettings settings;
  private final Map<ReaderKey, ReaderPages> readers = new ConcurrentHashMap<>();

  ReaderSide(ClientPool pool, ClientSettings settings) {
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
  }

  private ReaderPages reader(EngineShuffleId shuffle, long readerStage) {
    return readers.computeIfAbsent(
        new ReaderKey(shuffle, readerStage),
        k -> new ReaderPages(settings.commitTimeout().plus(settings.network().requestTimeout())));
  }

  /** See {@link ShuffleClient#fileGroups(HostPort, EngineShuffleId, int, long)}. */
  ReducerFileGroups fileGroups(
      HostPort lifecycle, EngineShuffleId shuffle, int numMaps, long readerStage) {
    ReaderPages reader = reader(shuffle, readerStage);
    return range(reader, lifecycle, shuffle, numMaps, 0, Integer.MAX_VALUE);
  }

  /** See {@link ShuffleClient#fileGroups(HostPort, EngineShuffleId, int, long, int, int)}. */
  ReducerFileGroups fileGroups(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int numMaps,
      long readerStage,
      int start,
      int end) {
    PartitionPages pages = settings.pages();
    // One entry for the whole call: its pages are all of the generation it pinned.
    ReaderPages reader = reader(shuffle, readerStage);
    if (start >= end) {
      return range(reader, lifecycle, shuffle, numMaps, start, start);
    }
    List<ReducerFileGroups> parts = new ArrayList<>();
    for (int page = pages.page(start); page <= pages.page(end - 1); page++) {
      long pageEnd = (long) pages.start(page) + pages.size();
      parts.add(
          range(
              reader,
              lifecycle,
              shuffle,
              numMaps,
              pages.start(page),
              (int) Math.min(Integer.MAX_VALUE, pageEnd)));
    }
    try {
      return ReducerFileGroups.combine(parts);
    } catch (IllegalArgumentException e) {
      throw new FaroException(ErrorCode.INTERNAL, e.getMessage(), e);
    }
  }

  private ReducerFileGroups range(
      ReaderPages reader,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int numMaps,
      int start,
      int end) {
    long key = ((long) start << 32) | (end & 0xffffffffL);
    return reader.ranges.get(
        key,
        k ->
            askFiles(lifecycle, shuffle, numMaps, start, end, reader.generation.get())
                .thenCompose(
                    r -> {
                      // The first answer pins the generation; one of another generation
                      // (asked before the pin, answered after it) is asked again, pinned.
                      int answered = r.faroShuffle().shuffle();
                      reader.generation.compareAndSet(null, answered);
                      Integer pinned = reader.generation.get();
                      if (numMaps == 0 || pinned == answered) {
                        return CompletableFuture.completedFuture(r);
                      }
                      return askFiles(lifecycle, shuffle, numMaps, start, end, pinned);
                    }),
        "committed files of partitions "
            + start
            + ".."
            + (end == Integer.MAX_VALUE ? "" : String.valueOf(end - 1))
            + " of shuffle "
            + shuffle
            + " from "
            + lifecycle);
  }

  private CompletableFuture<ReducerFileGroups> askFiles(
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int numMaps,
      int start,
      int end,
      Integer generation) {
    return ExecutorProto.fileGroups(
        pool, lifecycle, shuffle, numMaps, start, end, generation, settings.commitTimeout());
  }

  /** See {@link ShuffleClient#newReader(HostPort, EngineShuffleId, int, ReadRange, long)}. */
  PartitionReader newReader(
      HostPort lifecycle, EngineShuffleId shuffle, int numMaps, ReadRange range, long readerStage) {
    int startPartition = range.startPartition();
    int endPartition = range.endPartition();
    int startMap = range.startMap();
    int endMap = range.endMap();
    ReducerFileGroups groups =
        fileGroups(lifecycle, shuffle, numMaps, readerStage, startPartition, endPartition);
    if (!groups.covers(startPartition, endPartition)) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "partitions "
              + startPartition
              + ".."
              + (endPartition - 1)
              + " asked of shuffle "
              + shuffle
              + ", which has fewer");
    }
    long[] rangeExpected =
        startMap <= 0 && endMap >= groups.numMaps()
            ? null
            : mapRangeBatches(lifecycle, shuffle, groups, range);
    return new PartitionReader(groups, range, rangeExpected, pool, settings);
  }

  /**
   * For a reader of maps [startMap, endMap) only: the batches their winning attempts pushed to each
   * partition of [start, end), from the driver (one small request per such reader, as Spark's skew
   * splits and local readers are few), so that a missing batch is DATA_LOST on the skew path as on
   * the full one. Null when the driver does not count (an older one): not checked.
   */
  private long[] mapRangeBatches(
      HostPort lifecycle, EngineShuffleId shuffle, ReducerFileGroups groups, ReadRange range) {
    int start = range.startPartition();
    int end = range.endPartition();
    int startMap = range.startMap();
    int endMap = range.endMap();
    long[] counts =
        Futures.await(
            ExecutorProto.mapRangeBatches(
                pool, lifecycle, shuffle, groups, range, settings.commitTimeout()),
            settings.commitTimeout().plus(settings.network().requestTimeout()),
            "batch counts of maps "
                + startMap
                + ".."
                + (endMap - 1)
                + " of partitions "
                + start
                + ".."
                + (end - 1)
                + " of shuffle "
                + groups.faroShuffle()
                + " from "
                + lifecycle);
    if (counts.length == 0 && end > start) {
      return null;
    }
    if (counts.length != end - start) {
      throw new FaroException(
          ErrorCode.INTERNAL,
          "the driver counted batches of "
              + counts.length
              + " partitions for a reader of "
              + (end - start));
    }
    return counts;
  }

  /** See {@link ShuffleClient#reportLost}. */
  void reportLost(HostPort lifecycle, ShuffleId faroShuffle, int partition, String reason) {
    Futures.await(
        ExecutorProto.reportLost(pool, lifecycle, faroShuffle, partition, reason),
        settings.network().requestTimeout(),
        "reporting lost data of shuffle " + faroShuffle);
    // The stage attempts pinned to the lost generation forget it: their next ask is not pinned.
    readers
        .entrySet()
        .removeIf(
            e ->
                e.getKey().engineShuffle().app().equals(faroShuffle.app())
                    && Integer.valueOf(faroShuffle.shuffle())
                        .equals(e.getValue().generation.get()));
  }

  /** Drops the file groups of engine shuffle number {@code shuffle} of any app. */
  void forget(int shuffle) {
    readers.keySet().removeIf(k -> k.engineShuffle().id() == shuffle);
  }
}
