package io.faro.master.placement;

import io.faro.common.id.PartitionLocation;
import java.util.List;

/**
 * Chooses a worker and a disk for each partition of a request. Runs on the leader only: it may
 * use the leader's in-memory load view, and its answer goes into an AllocateSlots log entry, so
 * the choice itself never has to be deterministic. Implementations are thread-safe (requests
 * arrive on every event loop).
 *
 * <p>Round-robin is the first implementation; disk-load-aware placement and replicas (a primary
 * and a replica on different hosts) are further implementations of this interface.
 */
public interface SlotPlacement {
  /**
   * Places every partition of {@code request} on {@code candidates} (alive workers, ordered by
   * id), returning one location per partition in request order.
   *
   * @throws io.faro.common.error.FaroException NO_AVAILABLE_WORKERS when no candidate has a
   *     usable disk
   */
  List<PartitionLocation> place(PlacementRequest request, List<WorkerCandidate> candidates);
}
