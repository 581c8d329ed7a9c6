package io.faro.common.auth;

import io.faro.common.id.ShuffleId;

/**
 * The masters' word that a shuffle may be reserved on a worker. A driver reserves its shuffle's
 * locations on the workers itself; without this, an admitted application could reserve on workers
 * directly, for shuffles or partitions the masters never placed, and skip their quotas and limits.
 * With faro.auth.enabled the leader that places a shuffle grants each worker it chose an HMAC,
 * under the cluster secret, of the shuffle, its partition count and that worker's id; the driver
 * passes it on with its reservations, and a worker reserves only with a valid grant, and only
 * partitions below that count.
 */
public final class PlacementGrants {
  private static final String LABEL = "faro-placement-grant-v1\n";

  private PlacementGrants() {}

  /** The grant to reserve {@code shuffle}, of {@code numPartitions}, on worker {@code workerId}. */
  public static byte[] grant(
      Secret cluster, ShuffleId shuffle, int numPartitions, String workerId) {
    return Hmac.sha256(
        cluster,
        LABEL
            + shuffle.app().value()
            + "\n"
            + shuffle.shuffle()
            + "\n"
            + numPartitions
            + "\n"
            + workerId);
  }

  /** Whether {@code given} is that grant. */
  public static boolean valid(
      Secret cluster, ShuffleId shuffle, int numPartitions, String workerId, byte[] given) {
    return Handshake.matches(grant(cluster, shuffle, numPartitions, workerId), given);
  }
}
