package io.faro.worker.partition;

/**
 * What {@link PartitionStore#sealAll} did.
 *
 * @param sealedLocations locations whose file (or emptiness) is sealed and recorded
 * @param sealedShuffles shuffles they belong to
 * @param failedLocations locations whose file failed, or that could not be recorded: not served
 *     after a restart
 */
public record SealReport(int sealedLocations, int sealedShuffles, int failedLocations) {
  static final SealReport NOTHING = new SealReport(0, 0, 0);

  SealReport plus(SealReport other) {
    return new SealReport(
        sealedLocations + other.sealedLocations,
        sealedShuffles + other.sealedShuffles,
        failedLocations + other.failedLocations);
  }
}
