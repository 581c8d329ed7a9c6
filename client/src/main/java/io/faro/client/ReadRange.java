package io.faro.client;

/**
 * What one reader reads: partitions {@code [startPartition, endPartition)}, keeping only the
 * batches of maps {@code [startMap, endMap)}. {@code endMap} may exceed the shuffle's number of
 * maps (the engine's "to the last map"); the reader clamps it.
 */
public record ReadRange(int startPartition, int endPartition, int startMap, int endMap) {
  public ReadRange {
    if (startPartition < 0) {
      throw new IllegalArgumentException("negative start partition " + startPartition);
    }
    if (endPartition < startPartition) {
      throw new IllegalArgumentException(
          "end partition " + endPartition + " before start partition " + startPartition);
    }
    if (startMap < 0) {
      throw new IllegalArgumentException("negative start map " + startMap);
    }
    if (endMap < startMap) {
      throw new IllegalArgumentException("end map " + endMap + " before start map " + startMap);
    }
  }
}
