package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.PartitionPages;
import io.faro.client.protocol.DriverProto;
import io.faro.client.push.MapPusher;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Places a generation's partitions, a page at a time: slots from the masters, reserved on every
 * chosen worker, in rounds that replace the workers that failed to reserve; and moves partitions
 * whose push failed (revive) to new locations under a new epoch, avoiding the workers that failed
 * recently.
 */
final class Placement {
  private static final Logger LOG = LoggerFactory.getLogger(Placement.class);

  /**
   * Rounds of placement before a shuffle's registration fails; each excludes the workers that
   * failed.
   */
  private static final int ROUNDS = 3;

  /**
   * Most locations in one ReserveSlots request: below every worker's
   * faro.worker.reserve.max.locations default.
   */
  static final int RESERVE_BATCH = 50_000;

  /**
   * How long a worker that failed a push or a reservation is left out of revives of the app's
   * shuffles.
   */
  private static final long FAILED_WORKER_MILLIS = 60_000;

  /**
   * How long the slot request after a round whose every worker refused for good (a limit) keeps
   * trying: enough for a redirect to the leader, short enough that a shuffle no worker has room for
   * fails (or falls back) at once instead of after faro.master.client.retry.timeout. Any other
   * failure of it (a master that does not answer, an election) sends the usual request.
   */
  private static final Duration AFTER_LASTING_REFUSALS = Duration.ofSeconds(2);

  private final ClientSettings settings;
  private final ClientPool pool;
  private final MasterClient master;
  private final Clock clock;

  /**
   * Workers that failed a push or a reservation recently, with the time: revives avoid them for a
   * while.
   */
  private final Map<WorkerId, Long> recentlyFailed = new ConcurrentHashMap<>();

  Placement(ClientSettings settings, ClientPool pool, MasterClient master, Clock clock) {
    this.settings = requireNonNull(settings, "settings is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.master = requireNonNull(master, "master is null");
    this.clock = requireNonNull(clock, "clock is null");
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
        placeRound(g, partitions, new HashSet<>(), Set.of(), new ArrayList<>(), 1, 0, List.of())
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
   * One round of placement of {@code partitions} (all of the shuffle's when empty): slots from the
   * master, reserved on every chosen worker. A worker that cannot reserve (unreachable, refusing)
   * is replaced: its partitions are placed again, under a new epoch and excluding every worker that
   * failed so far, for at most {@link #ROUNDS} rounds. {@code excluded} workers get nothing (they
   * failed to reserve); {@code avoided} ones get partitions only when the others cannot take them.
   * {@code refusals}: when every worker excluded so far refused for good (over a limit, which a
   * retry does not change), their answers; then a master with no other worker to offer ends the
   * placement at once, with them (see {@link #doesNotFit}).
   */
  private CompletableFuture<List<PartitionLocation>> placeRound(
      Generation g,
      List<Integer> partitions,
      Set<WorkerId> excluded,
      Set<WorkerId> avoided,
      List<PartitionLocation> placed,
      int round,
      int epoch,
      List<FaroException> refusals) {
    CompletableFuture<DriverProto.Slots> granted;
    if (refusals.isEmpty()) {
      granted = requestSlots(g, partitions, excluded, avoided, epoch, master.retryTimeout());
    } else {
      granted =
          requestSlots(g, partitions, excluded, avoided, epoch, AFTER_LASTING_REFUSALS)
              .handle(
                  (slots, error) -> {
                    if (error == null) {
                      return CompletableFuture.completedFuture(slots);
                    }
                    Throwable cause = Futures.unwrap(error);
                    if (cause instanceof FaroException fe
                        && fe.code() == ErrorCode.NO_AVAILABLE_WORKERS) {
                      return CompletableFuture.<DriverProto.Slots>failedFuture(
                          doesNotFit(g, partitions, refusals, fe));
                    }
                    // Not the answer that there is no other worker (an election, a timeout): ask
                    // as every other round does.
                    return requestSlots(
                        g, partitions, excluded, avoided, epoch, master.retryTimeout());
                  })
              .thenCompose(f -> f);
    }
    return granted.thenCompose(
        slots -> {
          if (epoch == 0) {
            g.timeline().mark(ShuffleTimeline.Mark.SLOTS_GRANTED);
          }
          List<PartitionLocation> locations = slots.locations();
          Map<WorkerId, CompletableFuture<Void>> reservations =
              reserveEverywhere(g, locations, slots);
          return CompletableFuture.allOf(
                  reservations.values().stream()
                      .map(f -> f.exceptionally(e -> null))
                      .toArray(CompletableFuture[]::new))
              .thenCompose(
                  v ->
                      afterReservations(
                          g,
                          locations,
                          reservations,
                          excluded,
                          avoided,
                          placed,
                          round,
                          epoch,
                          refusals));
        });
  }

  private CompletableFuture<DriverProto.Slots> requestSlots(
      Generation g,
      List<Integer> partitions,
      Set<WorkerId> excluded,
      Set<WorkerId> avoided,
      int epoch,
      Duration retryFor) {
    return DriverProto.requestSlots(
        master,
        g.id(),
        g.rerun(),
        g.numPartitions(),
        partitions,
        epoch,
        settings.replicate(),
        excluded,
        avoided,
        retryFor);
  }

  /**
   * The failure of a placement that no worker has room for: every worker that was offered refused
   * for good, and the masters have no other. LIMIT_EXCEEDED (so that the application does not retry
   * it, and falls back under policy auto) when the refusals were limits; it names them, and so the
   * limit and its key.
   */
  private static FaroException doesNotFit(
      Generation g, List<Integer> partitions, List<FaroException> refusals, FaroException none) {
    ErrorCode code =
        refusals.stream().allMatch(r -> r.code() == ErrorCode.LIMIT_EXCEEDED)
            ? ErrorCode.LIMIT_EXCEEDED
            : refusals.get(0).code();
    return new FaroException(
        code,
        "shuffle "
            + g.id()
            + " does not fit: "
            + (partitions.isEmpty() ? "its" : partitions.size())
            + " partitions were refused by every worker offered, and the masters have no"
            + " other ("
            + none.getMessage()
            + "); refused: "
            + refusals.stream().map(Throwable::getMessage).toList(),
        refusals.get(0));
  }

  /**
   * Reserves every copy of {@code locations} (primaries and replicas alike: a location is placed
   * only once every copy is reserved), one request per worker.
   */
  private Map<WorkerId, CompletableFuture<Void>> reserveEverywhere(
      Generation g, List<PartitionLocation> locations, DriverProto.Slots slots) {
    Map<WorkerId, CompletableFuture<Void>> reservations = new LinkedHashMap<>();
    Locations.copiesByWorker(locations)
        .forEach((worker, locs) -> reservations.put(worker, reserve(g, worker, locs, slots)));
    return reservations;
  }

  /**
   * Adds the locations whose every copy was reserved to {@code placed}; places the rest again
   * without the workers that failed, or fails after {@link #ROUNDS} rounds.
   */
  private CompletableFuture<List<PartitionLocation>> afterReservations(
      Generation g,
      List<PartitionLocation> locations,
      Map<WorkerId, CompletableFuture<Void>> reservations,
      Set<WorkerId> excluded,
      Set<WorkerId> avoided,
      List<PartitionLocation> placed,
      int round,
      int epoch,
      List<FaroException> refusals) {
    Set<WorkerId> failed = new HashSet<>();
    List<String> failures = new ArrayList<>();
    List<FaroException> lasting = new ArrayList<>(refusals);
    boolean allLasting = true;
    for (Map.Entry<WorkerId, CompletableFuture<Void>> r : reservations.entrySet()) {
      if (r.getValue().isCompletedExceptionally()) {
        failed.add(r.getKey());
        Throwable error = Futures.unwrap(r.getValue().handle((v, e) -> e).join());
        failures.add(error.getMessage());
        if (error instanceof FaroException fe && !fe.retryable()) {
          lasting.add(fe);
        } else {
          allLasting = false;
        }
      }
    }
    List<Integer> retry = new ArrayList<>();
    for (PartitionLocation l : locations) {
      if (l.copies().stream().anyMatch(c -> failed.contains(c.worker()))) {
        retry.add(l.partition());
      } else {
        placed.add(l);
      }
    }
    if (retry.isEmpty()) {
      LOG.info(
          "Shuffle {} placed: {} partitions (epoch {}) on {} workers{}",
          g.id(),
          placed.size(),
          epoch,
          Locations.copiesByWorker(placed).size(),
          settings.replicate() ? ", replicated" : "");
      return CompletableFuture.completedFuture(List.copyOf(placed));
    }
    // Refusals for good count only while every worker left out refused so: one left out for a
    // failure that may pass (unreachable, busy) keeps the usual patience of the slot request.
    List<FaroException> stillLasting =
        allLasting && refusals.size() == excluded.size() ? lasting : List.of();
    excluded.addAll(failed);
    long now = clock.millis();
    failed.forEach(w -> recentlyFailed.put(w, now));
    if (round >= ROUNDS) {
      String message =
          "could not reserve "
              + retry.size()
              + " partitions of shuffle "
              + g.id()
              + " after "
              + round
              + " rounds; last failures: "
              + failures;
      return CompletableFuture.failedFuture(
          stillLasting.isEmpty()
              ? new FaroException(ErrorCode.RESERVE_FAILED, message)
              : new FaroException(stillLasting.get(0).code(), message, stillLasting.get(0)));
    }
    LOG.warn(
        "Shuffle {}: placing {} partitions again without workers {}: {}",
        g.id(),
        retry.size(),
        excluded,
        failures);
    // A new epoch: a worker that did reserve keeps its (now unused, empty) location.
    return placeRound(g, retry, excluded, avoided, placed, round + 1, g.newEpoch(), stillLasting);
  }

  /**
   * Reserves {@code locs} on {@code worker}, passing on the grants of {@code slots} (none from a
   * cluster without authentication); completes once every request of it did.
   */
  private CompletableFuture<Void> reserve(
      Generation g, WorkerId worker, List<PartitionLocation> locs, DriverProto.Slots slots) {
    HostPort rpc = locs.get(0).endpoint().rpc();
    // In requests of at most RESERVE_BATCH locations: a worker refuses larger ones
    // (faro.worker.reserve.max.locations), whatever the number of partitions of the shuffle.
    List<CompletableFuture<?>> parts = new ArrayList<>();
    for (int from = 0; from < locs.size(); from += RESERVE_BATCH) {
      parts.add(
          DriverProto.reserve(
              pool,
              rpc,
              worker,
              g.id(),
              g.ownerToken(),
              g.numPartitions(),
              locs.subList(from, Math.min(locs.size(), from + RESERVE_BATCH)),
              slots));
    }
    return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
        .exceptionally(
            e -> {
              Throwable cause = Futures.unwrap(e);
              // A refusal for good (a limit of the worker) stays one: retrying cannot change it.
              ErrorCode code =
                  cause instanceof FaroException fe && !fe.retryable()
                      ? fe.code()
                      : ErrorCode.RESERVE_FAILED;
              throw new FaroException(
                  code,
                  "worker "
                      + worker
                      + " at "
                      + rpc
                      + " did not reserve "
                      + locs.size()
                      + " partitions of shuffle "
                      + g.id()
                      + ": "
                      + Futures.unwrap(e).getMessage(),
                  Futures.unwrap(e));
            });
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
      p.worker().ifPresent(w -> recentlyFailed.put(w, now));
    }
    recentlyFailed.values().removeIf(t -> now - t > FAILED_WORKER_MILLIS);
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
          Set<WorkerId> avoid = new HashSet<>(recentlyFailed.keySet());
          avoid.add(worker);
          LOG.info(
              "Shuffle {}: moving {} partitions off worker {} to epoch {}, avoiding {}",
              g.id(),
              moved.size(),
              worker,
              epoch,
              avoid);
          placeRound(g, moved, new HashSet<>(), avoid, new ArrayList<>(), 1, epoch, List.of())
              .whenComplete(
                  (placed, error) ->
                      locations.revived(
                          moved, placed, error == null ? null : Futures.unwrap(error)));
        });
    return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
        .thenApply(v -> answers.stream().map(CompletableFuture::join).toList());
  }
}
