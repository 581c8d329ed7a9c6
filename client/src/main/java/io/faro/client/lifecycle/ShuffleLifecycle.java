package io.faro.client.lifecycle;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionLocation;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import io.faro.proto.GetReducerFileGroupsResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The driver's view of one shuffle: its placement (requested once, when the first map task
 * asks, again after a failed attempt), which attempt won each map (the first to report
 * success), and its commit, started when the last map reports. Thread-safe without locks:
 * every field is set once or atomic.
 */
final class ShuffleLifecycle {
  private final ShuffleId id;
  private final int numMaps;
  private final int numPartitions;
  private final AtomicIntegerArray winners;
  private final AtomicInteger remainingMaps;
  // The latest placement attempt; a failed one is replaced by the next request.
  private final AtomicReference<CompletableFuture<List<PartitionLocation>>> placement = new AtomicReference<>();
  private final CompletableFuture<GetReducerFileGroupsResponse> committed = new CompletableFuture<>();

  ShuffleLifecycle(ShuffleId id, int numMaps, int numPartitions) {
    this.id = requireNonNull(id, "id is null");
    this.numMaps = numMaps;
    this.numPartitions = numPartitions;
    this.winners = new AtomicIntegerArray(numMaps);
    for (int m = 0; m < numMaps; m++) {
      winners.set(m, -1);
    }
    this.remainingMaps = new AtomicInteger(numMaps);
  }

  ShuffleId id() {
    return id;
  }

  int numMaps() {
    return numMaps;
  }

  int numPartitions() {
    return numPartitions;
  }

  /**
   * The shuffle's locations. The first caller starts {@code place} and the others share its
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
            next.complete(locations);
          }
        });
        return next;
      }
    }
  }

  /**
   * Records that {@code attemptId} of {@code mapId} succeeded. The first attempt wins; returns
   * the winner. When the last map gets its winner, {@code commit} runs once.
   */
  int mapperEnd(int mapId, int attemptId,
      Function<ShuffleLifecycle, CompletableFuture<GetReducerFileGroupsResponse>> commit) {
    if (mapId < 0 || mapId >= numMaps) {
      throw new FaroException(ErrorCode.INVALID_REQUEST,
          "map " + mapId + " outside 0.." + (numMaps - 1) + " of shuffle " + id);
    }
    if (winners.compareAndSet(mapId, -1, attemptId) && remainingMaps.decrementAndGet() == 0) {
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

  /** Placement if it was ever requested; a shuffle whose maps all wrote nothing may have none. */
  CompletableFuture<List<PartitionLocation>> placementIfStarted() {
    CompletableFuture<List<PartitionLocation>> current = placement.get();
    return current != null ? current : CompletableFuture.completedFuture(List.of());
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
}
