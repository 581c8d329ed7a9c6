package io.faro.client.driver;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
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

  /** Batches in all (the attempt's batch ids run from 0 to one below it), at most 2^31 - 1. */
  int total() {
    long sum = 0;
    for (int c : counts) {
      sum += c;
    }
    return (int) Math.min(Integer.MAX_VALUE, sum);
  }

  /**
   * These counts in a few bytes per partition, for the driver to keep per winning attempt: pairs
   * (partition minus the previous partition, count) as unsigned varints, in partition order. Two
   * bytes a pair in a dense shuffle of small counts.
   */
  byte[] packed() {
    long[] pairs = new long[partitions.length];
    for (int i = 0; i < pairs.length; i++) {
      pairs[i] = ((long) partitions[i] << 32) | (counts[i] & 0xffffffffL);
    }
    Arrays.sort(pairs);
    ByteArrayOutputStream out = new ByteArrayOutputStream(2 * pairs.length);
    int previous = 0;
    for (long pair : pairs) {
      int partition = (int) (pair >>> 32);
      varint(out, partition - previous);
      varint(out, (int) pair);
      previous = partition;
    }
    return out.toByteArray();
  }

  /** Hands {@code sink} every (partition, count) of {@code packed} ({@link #packed}). */
  static void unpack(byte[] packed, Sink sink) {
    int[] at = {0};
    int partition = 0;
    while (at[0] < packed.length) {
      partition += readVarint(packed, at);
      sink.add(partition, readVarint(packed, at));
    }
  }

  private static void varint(ByteArrayOutputStream out, int value) {
    while ((value & ~0x7f) != 0) {
      out.write((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    out.write(value);
  }

  private static int readVarint(byte[] b, int[] at) {
    int value = 0;
    for (int shift = 0; ; shift += 7) {
      byte next = b[at[0]++];
      value |= (next & 0x7f) << shift;
      if (next >= 0) {
        return value;
      }
    }
  }
}
