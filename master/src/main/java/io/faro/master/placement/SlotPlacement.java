package io.faro.master.placement;

import io.faro.common.id.PartitionLocation;
import java.util.List;

/**
 * Chooses a worker and a disk for each partition of a request, and for each replica when the
 * request asks for them. Runs on the leader only: it may use the leader's in-memory load view, and
 * its answer goes into an AllocateSlots log entry, so the choice itself never has to be
 * deterministic. Implementations are thread-safe (requests arrive on every event loop).
 *
 * <p>Which workers a request may get is decided before, by the {@link PlacementPolicy}; an
 * implementation chooses among those. {@link RoundRobinPlacement} is the one there is, replicas
 * included (on another host than their primary); disk-load-aware placement will be another.
 */
public interface SlotPlacement {
  /**
   * Places every partition of {@code request} on {@code candidates} (the workers the request may
   * get, ordered by id), returning one location per partition in request order.
   *
   * @throws io.faro.common.error.FaroException NO_AVAILABLE_WORKERS when no candidate has a usable
   *     disk, or fewer than two do for a request with replicas
   */
  List<PartitionLocation> place(PlacementRequest request, List<WorkerCandidate> candidates);
}
