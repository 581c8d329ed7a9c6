package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.ShuffleId;
import java.util.List;

/** Partitions of one shuffle that need a location, all under one epoch, with or without replicas. */
public record PlacementRequest(ShuffleId shuffle, List<Integer> partitions, int epoch, boolean replicate) {
  public PlacementRequest {
    requireNonNull(shuffle, "shuffle is null");
    partitions = List.copyOf(partitions);
    if (epoch < 0) {
      throw new IllegalArgumentException("negative epoch " + epoch + " for shuffle " + shuffle);
    }
  }

  public PlacementRequest(ShuffleId shuffle, List<Integer> partitions, int epoch) {
    this(shuffle, partitions, epoch, false);
  }
}
