package io.faro.client.driver;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import java.util.BitSet;
import java.util.List;

/**
 * The batches one map attempt pushed, per partition it wrote to, as its mapper end reports them
 * (sparse: partitions without a batch are absent). Immutable.
 */
record BatchCounts(int[] partitions, int[] counts) {
  /** Receives one partition's count. */
  @FunctionalInterface
  interface Sink {
    void add(int partition, long count);
  }

  static BatchCounts of(List<Integer> partitions, List<Integer> counts) {
    if (partitions.size() != counts.size()) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "mapper end lists "
              + partitions.size()
              + " partitions but "
              + counts.size()
              + " batch counts");
    }
    return new BatchCounts(
        partitions.stream().mapToInt(Integer::intValue).toArray(),
        counts.stream().mapToInt(Integer::intValue).toArray());
  }

  /**
   * @throws FaroException INVALID_REQUEST unless every partition is distinct and within the
   *     shuffle's {@code numPartitions}, and every count positive
   */
  void checkWithin(int numPartitions, ShuffleId shuffle) {
    if (partitions.length > numPartitions) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "mapper end of shuffle "
              + shuffle
              + " counts batches of "
              + partitions.length
              + " partitions; it has "
              + numPartitions);
    }
    BitSet seen = new BitSet(numPartitions);
    for (int i = 0; i < partitions.length; i++) {
      int p = partitions[i];
      if (p < 0 || p >= numPartitions || seen.get(p) || counts[i] <= 0) {
        throw new FaroException(
            ErrorCode.INVALID_REQUEST,
            "mapper end of shuffle "
                + shuffle
                + " counts "
                + counts[i]
                + " batches of partition "
                + p
                + ": partitions must be distinct and in 0.."
                + (numPartitions - 1)
                + ", counts positive");
      }
      seen.set(p);
    }
  }

  void forEach(Sink sink) {
    for (int i = 0; i < partitions.length; i++) {
      sink.add(partitions[i], counts[i]);
    }
  }
}
