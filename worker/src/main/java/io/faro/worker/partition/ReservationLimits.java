package io.faro.worker.partition;

/**
 * Bounds on what reservations and first parts may make this worker hold.
 *
 * @param maxLocationsPerReserve faro.worker.reserve.max.locations
 * @param maxPartitions faro.worker.max.partitions: locations held, idle or written
 * @param maxWrittenPartitions faro.worker.max.written.partitions: locations that received a part (a
 *     writer each)
 */
public record ReservationLimits(
    int maxLocationsPerReserve, int maxPartitions, int maxWrittenPartitions) {
  public static final ReservationLimits DEFAULT =
      new ReservationLimits(100_000, 2_097_152, 262_144);

  public ReservationLimits {
    if (maxLocationsPerReserve <= 0 || maxPartitions <= 0 || maxWrittenPartitions <= 0) {
      throw new IllegalArgumentException(
          "limits must be positive: "
              + maxLocationsPerReserve
              + ", "
              + maxPartitions
              + ", "
              + maxWrittenPartitions);
    }
  }

  /** Every location held may be written. */
  public ReservationLimits(int maxLocationsPerReserve, int maxPartitions) {
    this(maxLocationsPerReserve, maxPartitions, maxPartitions);
  }
}
