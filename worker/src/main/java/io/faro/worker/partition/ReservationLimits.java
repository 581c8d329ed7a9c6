package io.faro.worker.partition;

/**
 * Bounds on what reservations may make this worker hold.
 *
 * @param maxLocationsPerReserve faro.worker.reserve.max.locations
 * @param maxPartitions faro.worker.max.partitions
 */
public record ReservationLimits(int maxLocationsPerReserve, int maxPartitions) {
  public static final ReservationLimits DEFAULT = new ReservationLimits(100_000, 262_144);

  public ReservationLimits {
    if (maxLocationsPerReserve <= 0 || maxPartitions <= 0) {
      throw new IllegalArgumentException(
          "limits must be positive: " + maxLocationsPerReserve + ", " + maxPartitions);
    }
  }
}
