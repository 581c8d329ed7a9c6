package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * Partitions of one shuffle that need a location, all under one epoch, with or without replicas.
 */
public record PlacementRequest(
    ShuffleId shuffle, List<Integer> partitions, int epoch, boolean replicate) {
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

  /**
   * The partitions a slot request asks to place: {@code ids}, or every partition of the shuffle
   * when it lists none (a first placement; a revive lists the ones it moves).
   *
   * @throws FaroException INVALID_REQUEST for a shuffle without partitions, or ids that are not
   *     distinct partitions of it
   */
  public static List<Integer> partitionsToPlace(
      ShuffleId shuffle, int numPartitions, List<Integer> ids) {
    if (numPartitions <= 0) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "num_partitions of shuffle " + shuffle + " must be positive, got " + numPartitions);
    }
    if (ids.size() > numPartitions) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "slot request for shuffle "
              + shuffle
              + " lists "
              + ids.size()
              + " partition ids but the shuffle has "
              + numPartitions);
    }
    if (ids.isEmpty()) {
      return IntStream.range(0, numPartitions).boxed().toList();
    }
    Set<Integer> seen = new HashSet<>();
    for (int id : ids) {
      if (id < 0 || id >= numPartitions || !seen.add(id)) {
        throw new FaroException(
            ErrorCode.INVALID_REQUEST,
            "bad partition id "
                + id
                + " for shuffle "
                + shuffle
                + ": ids must be distinct and in 0.."
                + (numPartitions - 1));
      }
    }
    return List.copyOf(ids);
  }
}
