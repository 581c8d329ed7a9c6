package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.network.HostPort;
import java.util.Optional;

/**
 * One partition location to reserve, on the disk at {@code diskIndex} of faro.worker.dirs; a
 * primary with replication names its replica's push address.
 */
public record Reservation(
    int partition, int epoch, int diskIndex, Optional<HostPort> replica, boolean replicaCopy) {
  public Reservation {
    requireNonNull(replica, "replica is null");
    if (replicaCopy && replica.isPresent()) {
      throw new IllegalArgumentException(
          "partition " + partition + " epoch " + epoch + ": a replica copy has no replica");
    }
  }

  /** A primary copy, with its replica's push address if it has one. */
  public Reservation(int partition, int epoch, int diskIndex, Optional<HostPort> replica) {
    this(partition, epoch, diskIndex, replica, false);
  }

  public Reservation(int partition, int epoch, int diskIndex) {
    this(partition, epoch, diskIndex, Optional.empty());
  }
}
