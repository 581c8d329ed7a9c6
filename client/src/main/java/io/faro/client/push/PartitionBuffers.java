package io.faro.client.push;

/**
 * The record bytes of one map attempt gathered per partition, before they are cut into batches, and
 * what they cost: the bytes gathered and the capacity of the arrays that hold them. Arrays are kept
 * for reuse only while they all fit in half of the limit (the other half is room to gather before
 * {@link #overLimit()} asks for the next cut of every partition), and never one a giant record
 * grew: memory must not grow with the number of partitions.
 *
 * <p>Confined to the map task's thread.
 */
final class PartitionBuffers {
  private final long limit;
  private final int batchSize;
  private final byte[][] buffers;
  private final int[] buffered;
  private final int initialCapacity;
  private long totalBuffered;
  private long retainedCapacity;

  /**
   * @param limit faro.client.push.buffer.size: bytes gathered, or array capacity held, that ask for
   *     a cut of every partition
   * @param batchSize faro.client.push.batch.size: an array more than twice this is never kept
   */
  PartitionBuffers(int numPartitions, long limit, int batchSize) {
    this.limit = limit;
    this.batchSize = batchSize;
    this.buffers = new byte[numPartitions][];
    this.buffered = new int[numPartitions];
    // Small first arrays when there are many partitions: their sum must stay within the limit.
    this.initialCapacity = (int) Math.max(256, Math.min(4096, limit / Math.max(1, numPartitions)));
  }

  void write(int partition, byte[] bytes, int offset, int length) {
    byte[] buffer = room(partition, length);
    System.arraycopy(bytes, offset, buffer, buffered[partition], length);
    buffered[partition] += length;
    totalBuffered += length;
  }

  void write(int partition, int b) {
    byte[] buffer = room(partition, 1);
    buffer[buffered[partition]++] = (byte) b;
    totalBuffered++;
  }

  /** The partition's array, grown to take {@code length} more bytes. */
  private byte[] room(int partition, int length) {
    int size = buffered[partition];
    byte[] buffer = buffers[partition];
    if (buffer == null || buffer.length - size < length) {
      int capacity =
          Math.max(
              Math.max(size + length, initialCapacity), buffer == null ? 0 : buffer.length * 2);
      byte[] grown = new byte[capacity];
      if (buffer != null) {
        System.arraycopy(buffer, 0, grown, 0, size);
        retainedCapacity -= buffer.length;
      }
      retainedCapacity += capacity;
      buffers[partition] = buffer = grown;
    }
    return buffer;
  }

  int buffered(int partition) {
    return buffered[partition];
  }

  long totalBuffered() {
    return totalBuffered;
  }

  /** Capacity of the arrays held, gathered bytes or not. */
  long retainedCapacity() {
    return retainedCapacity;
  }

  /** The array holding {@code partition}'s {@link #buffered} bytes (from index 0); null if none. */
  byte[] array(int partition) {
    return buffers[partition];
  }

  /** Whether the bytes gathered or the arrays held reach the limit. */
  boolean overLimit() {
    return totalBuffered >= limit || retainedCapacity >= limit;
  }

  int numPartitions() {
    return buffers.length;
  }

  /**
   * Empties {@code partition} once its bytes were encoded; its array is kept for reuse only as the
   * class comment says.
   */
  void cleared(int partition) {
    totalBuffered -= buffered[partition];
    buffered[partition] = 0;
    byte[] buffer = buffers[partition];
    if (buffer != null && (retainedCapacity > limit / 2 || buffer.length > 2 * batchSize)) {
      retainedCapacity -= buffer.length;
      buffers[partition] = null;
    }
  }
}
