package io.faro.master.placement;

import java.util.List;

/**
 * How large a partition location grows, as the workers' recent commits tell: the median over the
 * workers of the mean size of the partition files each committed lately, never below a floor (a
 * median, so that one worker's absurd report moves nothing). Placement divides a disk's usable
 * bytes by it to bound the slots the disk gets. Until some worker reports a commit it is the
 * configured initial size; when none has committed anything lately it keeps the last estimate.
 * Thread-safe.
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
   * Learns from the mean size of the files each worker committed lately ({@code perWorker}, one
   * entry per worker that committed any), and returns the estimate.
   */
  public long update(List<Long> perWorker) {
    if (!perWorker.isEmpty()) {
      long[] sorted = perWorker.stream().mapToLong(Long::longValue).sorted().toArray();
      bytes = Math.max(minBytes, sorted[sorted.length / 2]);
    }
    return bytes;
  }

  /** The current estimate, in bytes. */
  public long bytes() {
    return bytes;
  }
}
