package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.WorkerId;
import io.faro.master.state.RegisteredWorker;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Which workers a slot request may get and which it prefers, around a {@link SlotPlacement} that
 * chooses among them:
 *
 * <ul>
 *   <li>only alive workers an operator has not excluded or put to decommission (see {@link
 *       RegisteredWorker#takesSlots}) and that say they serve (not stopping for a restart, not
 *       draining: see {@link WorkerState}), less those the request excludes;
 *   <li>workers the request avoids (those a revive moves partitions away from) only when the others
 *       cannot take it: too few workers besides them are better than none.
 * </ul>
 *
 * <p>Each candidate carries its disks' latest load from the leader's heartbeats, for placement that
 * weighs them. Runs on the leader, on RPC event loops; thread-safe if the placement and the load
 * source are.
 */
public final class PlacementPolicy {
  private final SlotPlacement placement;
  private final Function<WorkerId, Map<Integer, DiskLoad>> diskLoads;
  private final Function<WorkerId, WorkerState> states;
  private final Consumer<List<PartitionLocation>> placed;

  /**
   * @param diskLoads a worker's latest disk loads by disk index (empty before its first heartbeat
   *     that reports them)
   * @param states what a worker's latest heartbeat said it was doing
   * @param placed hears of every placement made, so that the disk loads count its partitions until
   *     the workers' next heartbeats do
   */
  public PlacementPolicy(
      SlotPlacement placement,
      Function<WorkerId, Map<Integer, DiskLoad>> diskLoads,
      Function<WorkerId, WorkerState> states,
      Consumer<List<PartitionLocation>> placed) {
    this.placement = requireNonNull(placement, "placement is null");
    this.diskLoads = requireNonNull(diskLoads, "diskLoads is null");
    this.states = requireNonNull(states, "states is null");
    this.placed = requireNonNull(placed, "placed is null");
  }

  /**
   * Places every partition of {@code request}, one location per partition in request order.
   *
   * @param alive the alive workers, ordered by id
   * @param excluded ids of workers the request must not get
   * @param avoided ids of workers the request gets only if the others cannot take it
   * @throws FaroException NO_AVAILABLE_WORKERS when no worker may take the request
   */
  public List<PartitionLocation> place(
      PlacementRequest request,
      List<RegisteredWorker> alive,
      Collection<String> excluded,
      Collection<String> avoided) {
    Set<String> excludedIds = new HashSet<>(excluded);
    List<RegisteredWorker> takers =
        alive.stream()
            .filter(RegisteredWorker::takesSlots)
            .filter(w -> states.apply(w.id()).takesSlots())
            .toList();
    List<WorkerCandidate> candidates =
        takers.stream()
            .filter(w -> !excludedIds.contains(w.id().value()))
            .map(w -> new WorkerCandidate(w.id(), w.endpoint(), w.disks(), diskLoads.apply(w.id())))
            .toList();
    if (candidates.isEmpty() && !takers.isEmpty()) {
      // Not "no alive worker": the caller left out every one that could take the shuffle.
      throw new FaroException(
          ErrorCode.NO_AVAILABLE_WORKERS,
          "no worker for shuffle "
              + request.shuffle()
              + " besides the "
              + takers.size()
              + " the request leaves out (they did not reserve its partitions)");
    }
    List<PartitionLocation> locations = placeAvoiding(request, candidates, avoided);
    placed.accept(locations);
    return locations;
  }

  private List<PartitionLocation> placeAvoiding(
      PlacementRequest request, List<WorkerCandidate> candidates, Collection<String> avoided) {
    Set<String> avoidedIds = new HashSet<>(avoided);
    List<WorkerCandidate> preferred =
        candidates.stream().filter(c -> !avoidedIds.contains(c.id().value())).toList();
    if (avoidedIds.isEmpty() || preferred.size() == candidates.size()) {
      return placement.place(request, candidates);
    }
    try {
      return placement.place(request, preferred);
    } catch (FaroException e) {
      if (e.code() != ErrorCode.NO_AVAILABLE_WORKERS) {
        throw e;
      }
      // Too few workers besides the avoided ones: they are better than none.
      return placement.place(request, candidates);
    }
  }
}
