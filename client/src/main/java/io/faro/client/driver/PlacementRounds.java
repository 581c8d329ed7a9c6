package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.protocol.DriverProto;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rounds of one placement: slots from the masters for some partitions of a generation, reserved
 * on every chosen worker (one request per worker, in batches); the partitions of a worker that did
 * not reserve are asked for again without it, under a new epoch, for a few rounds. A placement that
 * no worker has room for ends at once, naming the workers' limits.
 */
final class PlacementRounds {
  private static final Logger LOG = LoggerFactory.getLogger(PlacementRounds.class);

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
  private final FailedWorkers failedWorkers;

  PlacementRounds(
      ClientSettings settings,
      ClientPool pool,
      MasterClient master,
      Clock clock,
      FailedWorkers failedWorkers) {
    this.settings = requireNonNull(settings, "settings is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.master = requireNonNull(master, "master is null");
    this.clock = requireNonNull(clock, "clock is null");
    this.failedWorkers = requireNonNull(failedWorkers, "failedWorkers is null");
  }

  /**
   * A placement of, in rounds, {@code partitions} (all of the shuffle's when empty): slots from the
   * master, reserved on every chosen worker. A worker that cannot reserve (unreachable, refusing)
   * is replaced: its partitions are placed again, under a new epoch and excluding every worker that
   * failed so far, for at most {@link #ROUNDS} rounds. {@code excluded} workers get nothing (they
   * failed to reserve); {@code avoided} ones get partitions only when the others cannot take them.
   * {@code refusals}: when every worker excluded so far refused for good (over a limit, which a
   * retry does not change), their answers; then a master with no other worker to offer ends the
   * placement at once, with them (see {@link #doesNotFit}).
   */
  CompletableFuture<List<PartitionLocation>> place(
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
    failed.forEach(w -> failedWorkers.failed(w, now));
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
    return place(g, retry, excluded, avoided, placed, round + 1, g.newEpoch(), stillLasting);
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
}
