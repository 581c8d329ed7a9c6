package io.faro.common.id;

import static java.util.Objects.requireNonNull;

/**
 * One location of one reducer partition: the partition and the epoch it was placed with. A revive
 * or a split places the partition again under a higher epoch, so each epoch names one file on one
 * worker.
 */
public record PartitionKey(ShuffleId shuffle, int partition, int epoch) {
  public PartitionKey {
    requireNonNull(shuffle, "shuffle is null");
    if (partition < 0 || epoch < 0) {
      throw new IllegalArgumentException(
          "bad partition " + partition + " epoch " + epoch + " in shuffle " + shuffle);
    }
  }

  @Override
  public String toString() {
    return shuffle + "/p" + partition + "e" + epoch;
  }
}
