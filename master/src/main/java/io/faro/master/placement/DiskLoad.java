package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

/**
 * One disk's load from a worker's latest heartbeat. Held in the leader's memory only, never in the
 * Raft log: placement reads it, and the slots it computes go into the log.
 *
 * @param usableBytes what the worker may still write there, as its last disk check found less what
 *     it wrote since
 * @param activePartitions partition locations on the disk that still take data (and, as the
 *     leader's {@code LoadView} reads it, those it placed there since the heartbeat)
 * @param flushMsPerMiB recent average time the disk took to write one MiB; 0 when unknown (it wrote
 *     too little lately to tell)
 * @param readMsPerMiB recent average time the disk took to read one MiB; 0 when unknown
 * @param reserveBytes the reserve of the disk's tier: below it the disk is full
 */
public record DiskLoad(
    int index,
    long usableBytes,
    DiskStatus status,
    int activePartitions,
    double flushMsPerMiB,
    double readMsPerMiB,
    long reserveBytes) {
  /** Above this a reported time is taken for a peer's nonsense and capped (about 16 minutes). */
  static final double MAX_MS_PER_MIB = 1e6;

  public DiskLoad {
    requireNonNull(status, "status is null");
    // From the wire: negative counts must not add room.
    usableBytes = Math.max(0, usableBytes);
    activePartitions = Math.max(0, activePartitions);
    reserveBytes = Math.max(0, reserveBytes);
    flushMsPerMiB = sane(flushMsPerMiB);
    readMsPerMiB = sane(readMsPerMiB);
  }

  /** A time from the wire: NaN, negative or absurd values must not steer placement. */
  private static double sane(double ms) {
    return Double.isNaN(ms) || ms <= 0 ? 0 : Math.min(ms, MAX_MS_PER_MIB);
  }

  /** What placement may fill: the usable bytes above the reserve. */
  public long fillableBytes() {
    return Math.max(0, usableBytes - reserveBytes);
  }

  /** The same disk with {@code more} partitions counted as open. */
  public DiskLoad withMorePartitions(int more) {
    return new DiskLoad(
        index,
        usableBytes,
        status,
        (int) Math.min(Integer.MAX_VALUE, (long) activePartitions + more),
        flushMsPerMiB,
        readMsPerMiB,
        reserveBytes);
  }
}
