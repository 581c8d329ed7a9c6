package io.faro.common.id;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/**
 * Where one epoch of one partition lives: the worker, its endpoint and the disk (index in the
 * worker's disk list) chosen by the master. A primary with replication names its replica: the same
 * partition and epoch, role REPLICA, on another worker.
 */
public record PartitionLocation(
    int partition,
    int epoch,
    Role role,
    WorkerId worker,
    WorkerEndpoint endpoint,
    int diskIndex,
    Optional<PartitionLocation> replica) {
  public PartitionLocation {
    requireNonNull(role, "role is null");
    requireNonNull(worker, "worker is null");
    requireNonNull(endpoint, "endpoint is null");
    requireNonNull(replica, "replica is null");
    if (replica.isPresent()) {
      PartitionLocation r = replica.get();
      if (role != Role.PRIMARY
          || r.role() != Role.REPLICA
          || r.partition() != partition
          || r.epoch() != epoch
          || r.replica().isPresent()
          || r.worker().equals(worker)) {
        throw new IllegalArgumentException(
            "partition "
                + partition
                + " epoch "
                + epoch
                + " on "
                + worker
                + ": a replica must be a REPLICA of the same partition and epoch on another worker, got "
                + r);
      }
    }
  }

  /** A location without replica. */
  public PartitionLocation(
      int partition,
      int epoch,
      Role role,
      WorkerId worker,
      WorkerEndpoint endpoint,
      int diskIndex) {
    this(partition, epoch, role, worker, endpoint, diskIndex, Optional.empty());
  }

  /** This primary with {@code replica} as its replica. */
  public PartitionLocation withReplica(PartitionLocation replica) {
    return new PartitionLocation(
        partition, epoch, role, worker, endpoint, diskIndex, Optional.of(replica));
  }

  public PartitionKey key(ShuffleId shuffle) {
    return new PartitionKey(shuffle, partition, epoch);
  }

  /** The copies of this location's data: itself, then its replica if any. */
  public List<PartitionLocation> copies() {
    return replica.map(r -> List.of(this, r)).orElseGet(() -> List.of(this));
  }
}
