package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

/**
 * One disk's load from a worker's latest heartbeat. Held in the leader's memory only, never in the
 * Raft log: placement reads it, and the slots it computes go into the log.
 */
public record DiskLoad(int index, long usableBytes, DiskStatus status, int activePartitions) {
  public DiskLoad {
    requireNonNull(status, "status is null");
  }
}
