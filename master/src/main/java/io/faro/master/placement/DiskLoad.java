package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

/**
 * One disk's load from a worker's latest heartbeat. Held in the leader's memory only, never in the
 * Raft log: placement reads it, and the slots it computes go into the log.
 *
 * @param usableBytes what the worker may still write there, as its last disk check found less what
 *     it wrote since
 * @param activePartitions partition locations on the disk that still take data
 * @param flushMsPerMiB recent average time the disk took to write one MiB; 0 when unknown (it wrote
 *     too little lately to tell)
 * @param readMsPerMiB recent average time the disk took to read one MiB; 0 when unknown
 */
public record DiskLoad(
    int index,
    long usableBytes,
    DiskStatus status,
    int activePartitions,
    double flushMsPerMiB,
    double readMsPerMiB) {
  /** Above this a reported time is taken for a peer's nonsense and capped (about 16 minutes). */
  static final double MAX_MS_PER_MIB = 1e6;

  public DiskLoad {
    requireNonNull(status, "status is null");
    flushMsPerMiB = sane(flushMsPerMiB);
    readMsPerMiB = sane(readMsPerMiB);
  }

  /** A time from the wire: NaN, negative or absurd values must not steer placement. */
  private static double sane(double ms) {
    return Double.isNaN(ms) || ms <= 0 ? 0 : Math.min(ms, MAX_MS_PER_MIB);
  }

  /** Whether the worker measured any time for this disk lately. */
  public boolean measured() {
    return flushMsPerMiB > 0 || readMsPerMiB > 0;
  }
}
