package io.faro.master.placement;

/**
 * How large a partition location grows, as the workers' recent commits tell: the bytes of the
 * partition files they committed lately over their number, never below a floor. Placement divides a
 * disk's usable bytes by it to bound the slots the disk gets. Until some worker reports a commit it
 * is the configured initial size; when none has committed anything lately it keeps the last
 * estimate. Thread-safe.
 */
public final class PartitionSizeEstimate {
  private final long minBytes;
  private volatile long bytes;

  /**
   * @param initialBytes faro.master.slots.partition.size.initial
   * @param minBytes faro.master.slots.partition.size.min
   */
  public PartitionSizeEstimate(long initialBytes, long minBytes) {
    if (minBytes <= 0 || initialBytes < minBytes) {
      throw new IllegalArgumentException(
          "bad partition size estimate: initial " + initialBytes + ", min " + minBytes);
    }
    this.minBytes = minBytes;
    this.bytes = initialBytes;
  }

  /**
   * Learns from {@code files} partition files of {@code committedBytes} in all that the workers
   * committed lately (summed over the workers), and returns the estimate.
   */
  public long update(long files, long committedBytes) {
    if (files > 0 && committedBytes >= 0) {
      bytes = Math.max(minBytes, committedBytes / files);
    }
    return bytes;
  }

  /** The current estimate, in bytes. */
  public long bytes() {
    return bytes;
  }
}
