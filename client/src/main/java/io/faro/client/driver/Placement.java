package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.PartitionPages;
import io.faro.client.push.MapPusher;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Places a generation's partitions, a page at a time, each page once however many tasks ask (the
 * rounds of one placement are {@link PlacementRounds}); and moves partitions whose push failed
 * (revive) to new locations under a new epoch, avoiding the workers that failed recently.
 */
final class Placement {
  private static final Logger LOG = LoggerFactory.getLogger(Placement.class);

  private final Clock clock;
  private final PlacementRounds rounds;

  /** Workers that failed a push or a reservation recently: revives avoid them for a while. */
  private final FailedWorkers failedWorkers = new FailedWorkers();

  Placement(ClientSettings settings, ClientPool pool, MasterClient master, Clock clock) {
    this.clock = requireNonNull(clock, "clock is null");
    this.rounds = new PlacementRounds(settings, pool, master, clock, failedWorkers);
  }

  /**
   * Places the pages of {@code g} that hold partitions of [start, end) and are not placed yet;
   * completes once all of them are. The first caller of a page places it and the others share that
   * placement; after a failure (a master election, workers refusing), the next caller places it
   * again. A page not placed by the time every map ended is not placed any more: only a losing
   * attempt can still ask, and its data is not needed.
   */
  CompletableFuture<Void> place(Generation g, int start, int end) {
    PartitionPages pages = g.pages();
    int from = Math.max(0, start);
    int until = Math.min(end, g.numPartitions());
    if (from >= until) {
      return CompletableFuture.completedFuture(null);
    }
    List<CompletableFuture<List<PartitionLocation>>> placing = new ArrayList<>();
    for (int page = pages.page(from); page <= pages.page(until - 1); page++) {
      placing.add(placePage(g, page));
    }
    return CompletableFuture.allOf(placing.toArray(CompletableFuture[]::new));
  }

  /** Every page of {@code g}: its first locations, as {@link #place} makes them. */
  CompletableFuture<List<PartitionLocation>> placeAll(Generation g) {
    return place(g, 0, g.numPartitions()).thenApply(v -> g.locations().current());
  }

  private CompletableFuture<List<PartitionLocation>> placePage(Generation g, int page) {
    while (true) {
      CompletableFuture<List<PartitionLocation>> current = g.placement(page);
      if (current != null && !current.isCompletedExceptionally()) {
        return current;
      }
      CompletableFuture<List<PartitionLocation>> next = new CompletableFuture<>();
      Generation.PlacementStart start = g.startPlacement(page, current, next);
      if (start == Generation.PlacementStart.REFUSED) {
        return CompletableFuture.failedFuture(
            new FaroException(
                ErrorCode.INVALID_REQUEST,
                "every map of shuffle "
                    + g.id()
                    + " has ended (or its data was lost): partitions "
                    + g.pages().start(page)
                    + ".."
                    + (g.pages().end(page, g.numPartitions()) - 1)
                    + " are no longer placed (this task is a losing attempt)"));
      }
      if (start == Generation.PlacementStart.STARTED) {
        g.timeline().mark(ShuffleTimeline.Mark.PLACEMENT_STARTED);
        // A shuffle of one page asks the masters for all its partitions, naming none.
        List<Integer> partitions =
            g.pages().onePage(g.numPartitions())
                ? List.of()
                : IntStream.range(g.pages().start(page), g.pages().end(page, g.numPartitions()))
                    .boxed()
                    .toList();
        rounds
            .place(g, partitions, new HashSet<>(), Set.of(), new ArrayList<>(), 1, 0, List.of())
            .whenComplete(
                (locations, error) -> {
                  if (error != null) {
                    // Timeline marks are the first page's: undone only while nothing is placed.
                    if (g.locations().all().isEmpty()) {
                      g.timeline().unmark(ShuffleTimeline.Mark.SLOTS_GRANTED);
                      g.timeline().unmark(ShuffleTimeline.Mark.PLACEMENT_STARTED);
                    }
                    next.completeExceptionally(error);
                  } else {
                    g.locations().placed(locations);
                    g.timeline().mark(ShuffleTimeline.Mark.PLACED);
                    next.complete(locations);
                  }
                });
        return next;
      }
    }
  }

  /**
   * New locations for partitions whose push failed, in the order asked. A partition already moved
   * past the failed epoch gets its current location; one being revived by another task shares that
   * revive; the rest are placed together, one placement (under one new epoch) per worker they are
   * on, which that placement avoids, as it avoids the workers that failed recently.
   */
  CompletableFuture<List<PartitionLocation>> revive(
      Generation g, List<MapPusher.Failed> partitions) {
    if (g.commitStarted()) {
      return CompletableFuture.failedFuture(
          new FaroException(
              ErrorCode.INVALID_REQUEST,
              "every map of shuffle "
                  + g.id()
                  + " has ended and its files are committed: this task is a losing attempt and its data is "
                  + "not needed"));
    }
    long now = clock.millis();
    for (MapPusher.Failed p : partitions) {
      p.worker().ifPresent(w -> failedWorkers.failed(w, now));
    }
    Set<WorkerId> recentlyFailed = failedWorkers.since(now);
    Locations locations = g.locations();
    List<Integer> toPlace = new ArrayList<>();
    List<CompletableFuture<PartitionLocation>> answers = new ArrayList<>();
    for (MapPusher.Failed p : partitions) {
      Locations.Revive revive = locations.revive(p.partition(), p.epoch());
      answers.add(revive.answer());
      if (revive.mustPlace()) {
        toPlace.add(p.partition());
      }
    }
    // Partitions leave the worker they are on (it failed, or their file there is full enough):
    // one placement per current worker, which that placement avoids.
    Map<WorkerId, List<Integer>> byCurrentWorker = new LinkedHashMap<>();
    for (int partition : toPlace) {
      PartitionLocation at = locations.current(partition);
      WorkerId worker = at == null ? new WorkerId("-") : at.worker();
      byCurrentWorker.computeIfAbsent(worker, w -> new ArrayList<>()).add(partition);
    }
    byCurrentWorker.forEach(
        (worker, moved) -> {
          int epoch = g.newEpoch();
          Set<WorkerId> avoid = new HashSet<>(recentlyFailed);
          avoid.add(worker);
          LOG.info(
              "Shuffle {}: moving {} partitions off worker {} to epoch {}, avoiding {}",
              g.id(),
              moved.size(),
              worker,
              epoch,
              avoid);
          rounds
              .place(g, moved, new HashSet<>(), avoid, new ArrayList<>(), 1, epoch, List.of())
              .whenComplete(
                  (placed, error) ->
                      locations.revived(
                          moved, placed, error == null ? null : Futures.unwrap(error)));
        });
    return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
        .thenApply(v -> answers.stream().map(CompletableFuture::join).toList());
  }
}
