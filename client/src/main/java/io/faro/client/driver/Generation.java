package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.PartitionPages;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One generation of one shuffle, as the driver knows it: its identity and shape, the token that
 * proves its requests to workers, the stage attempts that write it, which attempt won each map (the
 * first to report success) with the batches it pushed, its placement (page by page, see {@link
 * PartitionPages}), its {@link Locations}, and where it stands: maps running, commit started, or
 * lost. What it holds per partition is kept per page, made when the page is first used: a shuffle
 * of a million partitions of which few are written costs the driver little.
 *
 * <p>A generation is Faro's shuffle {@link #id()}; the engine's shuffle {@link #engineShuffleId()}
 * gets a new generation when a stage attempt re-runs its maps after data was lost or after the
 * engine rolled its stage back (see {@link Generations}). What acts on a generation (placing,
 * reviving, committing) lives in {@link Placement} and {@link Committer}; this class only keeps the
 * state, and decides atomically which map end starts the commit.
 *
 * <p>Thread-safe: everything is set once, atomic, or guarded by {@code this}.
 */
final class Generation {
  /** What a map's end decided: the winning attempt, and whether this end starts the commit. */
  record MapEnd(int winner, boolean startsCommit) {}

  private static final SecureRandom TOKENS = new SecureRandom();

  private final int engineShuffleId;
  private final ShuffleId id;
  private final int numMaps;
  private final int numPartitions;
  private final PartitionPages pages;

  /** Proves to workers that reservations and the commit come from this lifecycle manager. */
  private final long ownerToken;

  private final AtomicIntegerArray winners;

  /**
   * Batches the winning attempts pushed, per partition, one array per page (null until a winner
   * pushed to the page): readers check that they read exactly these.
   */
  private final AtomicReferenceArray<AtomicLongArray> expectedBatches;

  /**
   * Per map: its winning attempt's batches per partition ({@link BatchCounts#packed}, a few bytes
   * per partition it wrote to), for readers of a map range; and their total (the attempt's batch
   * ids run 0 .. total - 1). Null and 0 until the map has a winner.
   */
  private final AtomicReferenceArray<byte[]> winnerBatches;

  private final AtomicIntegerArray mapBatches;

  private final AtomicInteger remainingMaps;

  /**
   * The latest placement attempt of each page, null before the first; a failed one is replaced by
   * the next request.
   */
  private final AtomicReferenceArray<CompletableFuture<List<PartitionLocation>>> placements;

  private final AtomicInteger nextEpoch = new AtomicInteger(1);
  private final Locations locations;
  private final ShuffleTimeline timeline = new ShuffleTimeline();
  private volatile boolean commitStarted;
  private volatile boolean lost;

  /** The (stage id, stage attempt) pairs whose tasks write this generation. */
  private final Set<Long> writerStages = ConcurrentHashMap.newKeySet();

  private final boolean rerun;

  /** The first generation of an engine shuffle. */
  Generation(
      int engineShuffleId, ShuffleId id, int numMaps, int numPartitions, PartitionPages pages) {
    this(engineShuffleId, id, numMaps, numPartitions, pages, false);
  }

  Generation(
      int engineShuffleId,
      ShuffleId id,
      int numMaps,
      int numPartitions,
      PartitionPages pages,
      boolean rerun) {
    this.rerun = rerun;
    this.engineShuffleId = engineShuffleId;
    this.id = requireNonNull(id, "id is null");
    this.numMaps = numMaps;
    this.numPartitions = numPartitions;
    this.pages = requireNonNull(pages, "pages is null");
    this.ownerToken = newOwnerToken();
    this.winners = new AtomicIntegerArray(numMaps);
    for (int m = 0; m < numMaps; m++) {
      winners.set(m, -1);
    }
    this.remainingMaps = new AtomicInteger(numMaps);
    this.expectedBatches = new AtomicReferenceArray<>(pages.count(numPartitions));
    this.winnerBatches = new AtomicReferenceArray<>(numMaps);
    this.mapBatches = new AtomicIntegerArray(numMaps);
    this.placements = new AtomicReferenceArray<>(pages.count(numPartitions));
    this.locations = new Locations(id, numPartitions, pages);
  }

  private static long newOwnerToken() {
    long token;
    do {
      token = TOKENS.nextLong();
    } while (token == 0);
    return token;
  }

  /**
   * The random token this generation's reservations and commit carry: a worker commits a shuffle
   * only for the lifecycle manager that reserved it, never for a stray or forged request.
   */
  long ownerToken() {
    return ownerToken;
  }

  int engineShuffleId() {
    return engineShuffleId;
  }

  /** Faro's id of this generation: what workers know. */
  ShuffleId id() {
    return id;
  }

  /** Whether tasks of stage attempt {@code stageKey} write this generation. */
  boolean writtenBy(long stageKey) {
    return writerStages.contains(stageKey);
  }

  void addWriter(long stageKey) {
    writerStages.add(stageKey);
  }

  /** Whether some stage attempt's tasks write this generation (false: made at registration). */
  boolean written() {
    return !writerStages.isEmpty();
  }

  int numMaps() {
    return numMaps;
  }

  int numPartitions() {
    return numPartitions;
  }

  /** How this generation's partitions fall into pages. */
  PartitionPages pages() {
    return pages;
  }

  /**
   * @throws FaroException INVALID_REQUEST unless a request's shape is this generation's; a negative
   *     {@code numPartitions} means "as known" (a map's end names none)
   */
  void checkShape(int requestMaps, int requestPartitions) {
    if (numMaps != requestMaps || (requestPartitions >= 0 && numPartitions != requestPartitions)) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "shuffle "
              + id
              + " has "
              + numMaps
              + " maps and "
              + numPartitions
              + " partitions, request says "
              + requestMaps
              + " and "
              + requestPartitions);
    }
  }

  Locations locations() {
    return locations;
  }

  /** When each step of this generation's life happened. */
  ShuffleTimeline timeline() {
    return timeline;
  }

  /** The latest placement attempt of {@code page}, or null before the first. */
  CompletableFuture<List<PartitionLocation>> placement(int page) {
    return placements.get(page);
  }

  /** What {@link #startPlacement} did. */
  enum PlacementStart {
    STARTED,
    /** Another caller changed the page's placement first. */
    RACED,
    /** Every map ended (the commit started) or the generation was lost: nothing more is placed. */
    REFUSED
  }

  /**
   * Makes {@code next} the placement attempt of {@code page} if {@code expected} still is, unless
   * the commit started or the generation was lost; atomically with {@link #mapperEnd}'s start of
   * the commit, so that the commit sees every placement started before it.
   */
  synchronized PlacementStart startPlacement(
      int page,
      CompletableFuture<List<PartitionLocation>> expected,
      CompletableFuture<List<PartitionLocation>> next) {
    if (commitStarted || lost) {
      return PlacementStart.REFUSED;
    }
    return placements.compareAndSet(page, expected, next)
        ? PlacementStart.STARTED
        : PlacementStart.RACED;
  }

  /**
   * Completes once every page placement started so far has ended, failed or not; a shuffle whose
   * maps all wrote nothing may have none.
   */
  CompletableFuture<Void> placementsEnded() {
    List<CompletableFuture<?>> started = new ArrayList<>();
    for (int page = 0; page < placements.length(); page++) {
      CompletableFuture<List<PartitionLocation>> f = placements.get(page);
      if (f != null) {
        started.add(f.handle((placed, error) -> null));
      }
    }
    return CompletableFuture.allOf(started.toArray(CompletableFuture[]::new));
  }

  /** A fresh epoch, higher than any this shuffle used. */
  int newEpoch() {
    return nextEpoch.getAndIncrement();
  }

  /**
   * Records that {@code attemptId} of {@code mapId} succeeded, having pushed {@code batches}. The
   * first attempt wins, unless its output is {@code incomplete}. The end that gives the last map
   * its winner starts the commit (once, after every winner's batches were counted), unless the
   * generation was lost.
   */
  MapEnd mapperEnd(int mapId, int attemptId, BatchCounts batches, boolean incomplete) {
    if (mapId < 0 || mapId >= numMaps) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "map " + mapId + " outside 0.." + (numMaps - 1) + " of shuffle " + id);
    }
    batches.checkWithin(numPartitions, id);
    if (incomplete) {
      // Pushed into a committed shuffle: another attempt won, and this one never may.
      int winner = winners.get(mapId);
      if (winner < 0) {
        throw new FaroException(
            ErrorCode.SHUFFLE_COMMITTED,
            "attempt "
                + attemptId
                + " of map "
                + mapId
                + " of shuffle "
                + id
                + " has incomplete output (the shuffle was committed while it pushed) and no "
                + "attempt of the map won");
      }
      return new MapEnd(winner, false);
    }
    boolean last = false;
    if (winners.compareAndSet(mapId, -1, attemptId)) {
      // Counted before the decrement below: the map that starts the commit sees every winner's.
      batches.forEach(this::addExpected);
      winnerBatches.set(mapId, batches.packed());
      mapBatches.set(mapId, batches.total());
      // With loseIfIncomplete: either the last map starts the commit or the generation is lost.
      synchronized (this) {
        last = remainingMaps.decrementAndGet() == 0 && !lost;
        commitStarted |= last;
      }
    }
    return new MapEnd(winners.get(mapId), last);
  }

  /**
   * Marks the generation lost if some map has not ended (and so no commit started), atomically with
   * {@link #mapperEnd}'s last map; true if it did.
   */
  synchronized boolean loseIfIncomplete() {
    if (lost || commitStarted || remainingMaps.get() == 0) {
      return false;
    }
    lost = true;
    return true;
  }

  /**
   * Whether this generation re-runs an engine shuffle that had an earlier one: the masters let the
   * shuffle in already, and no quota refuses its slots.
   */
  boolean rerun() {
    return rerun;
  }

  /** Whether some map has a winner. */
  boolean anyMapEnded() {
    return remainingMaps.get() < numMaps;
  }

  /** Whether every map ended and the commit began: no new locations from then on. */
  boolean commitStarted() {
    return commitStarted;
  }

  private void addExpected(int partition, long batches) {
    int page = pages.page(partition);
    AtomicLongArray counts = expectedBatches.get(page);
    if (counts == null) {
      int size = pages.end(page, numPartitions) - pages.start(page);
      expectedBatches.compareAndSet(page, null, new AtomicLongArray(size));
      counts = expectedBatches.get(page);
    }
    counts.addAndGet(partition - pages.start(page), batches);
  }

  /**
   * Batches the winning attempts pushed to {@code partition} (complete once the commit started).
   */
  long expectedBatches(int partition) {
    AtomicLongArray counts = expectedBatches.get(pages.page(partition));
    return counts == null ? 0 : counts.get(partition - pages.start(pages.page(partition)));
  }

  /**
   * Batches the winning attempts of maps [startMap, endMap) pushed to each partition of [start,
   * end) (complete once the commit started): what a reader of that map range must read. Reads each
   * of those maps' counts once.
   */
  long[] expectedBatches(int start, int end, int startMap, int endMap) {
    long[] expected = new long[Math.max(0, end - start)];
    for (int m = Math.max(0, startMap); m < Math.min(numMaps, endMap); m++) {
      byte[] packed = winnerBatches.get(m);
      if (packed != null) {
        BatchCounts.unpack(
            packed,
            (p, count) -> {
              if (p >= start && p < end) {
                expected[p - start] += count;
              }
            });
      }
    }
    return expected;
  }

  /** Per map: batches its winning attempt pushed in all (0 for a map without a winner). */
  int[] mapBatches() {
    int[] copy = new int[numMaps];
    for (int m = 0; m < numMaps; m++) {
      copy[m] = mapBatches.get(m);
    }
    return copy;
  }

  int[] winners() {
    int[] copy = new int[numMaps];
    for (int m = 0; m < numMaps; m++) {
      copy[m] = winners.get(m);
    }
    return copy;
  }

  /** Marks the generation lost; true for the first caller only. */
  synchronized boolean markLost() {
    if (lost) {
      return false;
    }
    lost = true;
    return true;
  }

  boolean lost() {
    return lost;
  }
}
