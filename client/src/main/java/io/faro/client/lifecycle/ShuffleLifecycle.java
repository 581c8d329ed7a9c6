package io.faro.client.lifecycle;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.proto.GetReducerFileGroupsResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The driver's view of one generation of one shuffle: its placement (requested once, when the
 * first map task asks, again after a failed attempt), every location any partition ever had
 * (revives and splits add epochs), which attempt won each map (the first to report success),
 * and its commit, started when the last map reports.
 *
 * <p>A generation is Faro's shuffle {@link #id()}; the engine's shuffle {@link #engineShuffleId()}
 * gets a new generation when a stage attempt re-runs its maps after data was lost (see {@link
 * LifecycleManager}).
 *
 * <p>Thread-safe: the location registry is guarded by {@code this}; everything else is set once
 * or atomic.
 */
final class ShuffleLifecycle {
  private final int engineShuffleId;
  private final ShuffleId id;
  private final int numMaps;
  private final int numPartitions;
  /** Proves to workers that reservations and the commit come from this lifecycle manager. */
  private final long ownerToken;
  private final AtomicIntegerArray winners;
  /** Batches the winning attempts pushed, per partition: readers check that they read exactly these. */
  private final AtomicLongArray expectedBatches;
  private final AtomicInteger remainingMaps;
  // The latest placement attempt; a failed one is replaced by the next request.
  private final AtomicReference<CompletableFuture<List<PartitionLocation>>> placement = new AtomicReference<>();
  private final CompletableFuture<GetReducerFileGroupsResponse> committed = new CompletableFuture<>();
  private final AtomicInteger nextEpoch = new AtomicInteger(1);
  private volatile boolean commitStarted;
  private volatile boolean lost;
  /** The (stage id, stage attempt) pairs whose tasks write this generation. */
  private final Set<Long> writerStages = ConcurrentHashMap.newKeySet();

  // @GuardedBy("this") ------------------------------------------------------------------
  private final PartitionLocation[] current;
  private final List<PartitionLocation> all = new ArrayList<>();
  private final Map<Integer, CompletableFuture<PartitionLocation>> reviving = new HashMap<>();
  // -------------------------------------------------------------------------------------

  ShuffleLifecycle(int engineShuffleId, ShuffleId id, int numMaps, int numPartitions) {
    this.engineShuffleId = engineShuffleId;
    this.id = requireNonNull(id, "id is null");
    this.numMaps = numMaps;
    this.numPartitions = numPartitions;
    this.ownerToken = newOwnerToken();
    this.winners = new AtomicIntegerArray(numMaps);
    for (int m = 0; m < numMaps; m++) {
      winners.set(m, -1);
    }
    this.remainingMaps = new AtomicInteger(numMaps);
    this.expectedBatches = new AtomicLongArray(Math.max(0, numPartitions));
    this.current = new PartitionLocation[Math.max(0, numPartitions)];
  }

  private static final java.security.SecureRandom TOKENS = new java.security.SecureRandom();

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

  int numMaps() {
    return numMaps;
  }

  int numPartitions() {
    return numPartitions;
  }

  /**
   * The shuffle's first locations. The first caller starts {@code place} and the others share its
   * result; after a failure (master election, workers refusing), the next caller places again.
   */
  CompletableFuture<List<PartitionLocation>> placement(
      Supplier<CompletableFuture<List<PartitionLocation>>> place) {
    while (true) {
      CompletableFuture<List<PartitionLocation>> current = placement.get();
      if (current != null && !current.isCompletedExceptionally()) {
        return current;
      }
      CompletableFuture<List<PartitionLocation>> next = new CompletableFuture<>();
      if (placement.compareAndSet(current, next)) {
        place.get().whenComplete((locations, error) -> {
          if (error != null) {
            next.completeExceptionally(error);
          } else {
            placed(locations);
            next.complete(locations);
          }
        });
        return next;
      }
    }
  }

  /** Records reserved locations; a partition's current location is its highest epoch. */
  synchronized void placed(List<PartitionLocation> locations) {
    for (PartitionLocation l : locations) {
      all.add(l);
      PartitionLocation known = current[l.partition()];
      if (known == null || known.epoch() < l.epoch()) {
        current[l.partition()] = l;
      }
    }
  }

  /** The latest location of every placed partition. */
  synchronized List<PartitionLocation> currentLocations() {
    List<PartitionLocation> result = new ArrayList<>(current.length);
    for (PartitionLocation l : current) {
      if (l != null) {
        result.add(l);
      }
    }
    return result;
  }

  /** The latest location of {@code partition}, or null before placement. */
  synchronized PartitionLocation currentLocation(int partition) {
    return current[partition];
  }

  /** Every location ever reserved (all epochs), for the commit. */
  synchronized List<PartitionLocation> allLocations() {
    return List.copyOf(all);
  }

  /** A fresh epoch, higher than any this shuffle used. */
  int newEpoch() {
    return nextEpoch.getAndIncrement();
  }

  /**
   * The answer to a revive of {@code partition} whose push to {@code failedEpoch} failed: its
   * current location if that is newer already, the revive in progress if another task asked
   * first, or a new future that {@code start} (called at most once per call, with the
   * partitions that need a new location) must complete.
   */
  synchronized CompletableFuture<PartitionLocation> revive(int partition, int failedEpoch,
      List<Integer> toPlace, Function<Integer, CompletableFuture<PartitionLocation>> newFuture) {
    if (partition < 0 || partition >= current.length) {
      throw new FaroException(ErrorCode.INVALID_REQUEST,
          "partition " + partition + " outside 0.." + (current.length - 1) + " of shuffle " + id);
    }
    PartitionLocation known = current[partition];
    if (known != null && known.epoch() > failedEpoch) {
      return CompletableFuture.completedFuture(known);
    }
    CompletableFuture<PartitionLocation> inProgress = reviving.get(partition);
    if (inProgress != null) {
      return inProgress;
    }
    CompletableFuture<PartitionLocation> f = newFuture.apply(partition);
    reviving.put(partition, f);
    toPlace.add(partition);
    return f;
  }

  /** Ends the revives of {@code partitions}: the placed ones are current now, the others failed. */
  void revived(List<Integer> partitions, List<PartitionLocation> placed, Throwable error,
      Map<Integer, CompletableFuture<PartitionLocation>> futures) {
    if (error == null) {
      placed(placed);
    }
    synchronized (this) {
      partitions.forEach(reviving::remove);
    }
    if (error != null) {
      partitions.forEach(p -> futures.get(p).completeExceptionally(error));
      return;
    }
    for (PartitionLocation l : placed) {
      futures.get(l.partition()).complete(l);
    }
  }

  /**
   * Records that {@code attemptId} of {@code mapId} succeeded, having pushed {@code batches}. The
   * first attempt wins, unless its output is {@code incomplete}; returns the winner. When the last map gets its winner, {@code commit} runs
   * once, after every winner's batches were counted.
   */
  int mapperEnd(int mapId, int attemptId, BatchCounts batches, boolean incomplete,
      Function<ShuffleLifecycle, CompletableFuture<GetReducerFileGroupsResponse>> commit) {
    if (mapId < 0 || mapId >= numMaps) {
      throw new FaroException(ErrorCode.INVALID_REQUEST,
          "map " + mapId + " outside 0.." + (numMaps - 1) + " of shuffle " + id);
    }
    batches.checkWithin(numPartitions, id);
    if (incomplete) {
      // Pushed into a committed shuffle: another attempt won, and this one never may.
      int winner = winners.get(mapId);
      if (winner < 0) {
        throw new FaroException(ErrorCode.SHUFFLE_COMMITTED, "attempt " + attemptId + " of map " + mapId
            + " of shuffle " + id + " has incomplete output (the shuffle was committed while it pushed) and no "
            + "attempt of the map won");
      }
      return winner;
    }
    boolean last = false;
    if (winners.compareAndSet(mapId, -1, attemptId)) {
      // Counted before the decrement below: the map that starts the commit sees every winner's.
      batches.forEach(expectedBatches::addAndGet);
      // With loseIfIncomplete: either the last map starts the commit or the generation is lost.
      synchronized (this) {
        last = remainingMaps.decrementAndGet() == 0 && !lost;
        commitStarted |= last;
      }
    }
    if (last) {
      commit.apply(this).whenComplete((files, error) -> {
        if (error != null) {
          committed.completeExceptionally(error);
        } else {
          committed.complete(files);
        }
      });
    }
    return winners.get(mapId);
  }

  /**
   * Marks the generation lost if some map has not ended (and so no commit started), atomically
   * with {@link #mapperEnd}'s last map; true if it did.
   */
  synchronized boolean loseIfIncomplete() {
    if (lost || commitStarted || remainingMaps.get() == 0) {
      return false;
    }
    lost = true;
    return true;
  }

  /**
   * Answers the generation's readers with {@code groups} (every partition lost) without a
   * commit: some map will never end in it. The workers' files go when the shuffle is unregistered.
   */
  void abandon(GetReducerFileGroupsResponse groups) {
    committed.complete(groups);
  }

  /** Whether every map ended and the commit began: no new locations from then on. */
  boolean commitStarted() {
    return commitStarted;
  }

  /** Placement if it was ever requested; a shuffle whose maps all wrote nothing may have none. */
  CompletableFuture<List<PartitionLocation>> placementIfStarted() {
    CompletableFuture<List<PartitionLocation>> current = placement.get();
    return current != null ? current : CompletableFuture.completedFuture(List.of());
  }

  /** Batches of the winning attempts per partition (complete once the commit started). */
  long[] expectedBatches() {
    long[] copy = new long[expectedBatches.length()];
    for (int p = 0; p < copy.length; p++) {
      copy[p] = expectedBatches.get(p);
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

  CompletableFuture<GetReducerFileGroupsResponse> committed() {
    return committed;
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
