package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.state.DiskSpec;
import java.util.List;
import java.util.Map;

/**
 * An alive worker that may receive slots: its declared disks and, per disk index, the load of its
 * latest heartbeat (absent before the first heartbeat that reports the disk).
 */
public record WorkerCandidate(
    WorkerId id,
    WorkerEndpoint endpoint,
    List<DiskSpec> disks,
    Map<Integer, DiskLoad> latestLoads) {
  public WorkerCandidate {
    requireNonNull(id, "id is null");
    requireNonNull(endpoint, "endpoint is null");
    disks = List.copyOf(disks);
    latestLoads = Map.copyOf(latestLoads);
  }

  /**
   * Disks that may take new partitions, in declared order: a disk counts as usable until its worker
   * reports it otherwise.
   */
  public List<DiskSpec> usableDisks() {
    return disks.stream()
        .filter(
            d -> {
              DiskLoad load = latestLoads.get(d.index());
              return load == null || load.status() == DiskStatus.HEALTHY;
            })
        .toList();
  }
}
