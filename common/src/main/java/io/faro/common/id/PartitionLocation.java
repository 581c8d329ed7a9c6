package io.faro.common.id;

import static java.util.Objects.requireNonNull;

/**
 * Where one epoch of one partition lives: the worker, its endpoint and the disk (index in the
 * worker's disk list) chosen by the master.
 */
public record PartitionLocation(
    int partition, int epoch, Role role, WorkerId worker, WorkerEndpoint endpoint, int diskIndex) {
  public PartitionLocation {
    requireNonNull(role, "role is null");
    requireNonNull(worker, "worker is null");
    requireNonNull(endpoint, "endpoint is null");
  }

  public PartitionKey key(ShuffleId shuffle) {
    return new PartitionKey(shuffle, partition, epoch);
  }
}
