package io.faro.common.auth;

import io.faro.common.id.ShuffleId;

/**
 * The masters' word that a replica location is theirs. A primary forwards an app's pushes to the
 * replica named in its reservation, and proves the cluster secret to it; a reservation comes from
 * the app's driver, so without this a driver could name any host as a replica and have a worker
 * dial it, and relay the worker's handshake elsewhere. With faro.auth.enabled the leader that
 * places a shuffle grants each replica worker it chose an HMAC, under the cluster secret, of the
 * shuffle and that worker's id and push endpoint; the driver passes the grants on with its
 * reservations, and a worker reserves a replica location only with a valid grant for it.
 */
public final class ReplicaGrants {
  private static final String LABEL = "faro-replica-grant-v1\n";

  private ReplicaGrants() {}

  /** The grant for {@code shuffle}'s replicas on worker {@code workerId} at {@code host:port}. */
  public static byte[] grant(
      Secret cluster, ShuffleId shuffle, String workerId, String host, int pushPort) {
    return Hmac.sha256(
        cluster,
        LABEL
            + shuffle.app().value()
            + "\n"
            + shuffle.shuffle()
            + "\n"
            + workerId
            + "\n"
            + host
            + ":"
            + pushPort);
  }

  /** Whether {@code given} is the grant for that replica. */
  public static boolean valid(
      Secret cluster, ShuffleId shuffle, String workerId, String host, int pushPort, byte[] given) {
    return Handshake.matches(grant(cluster, shuffle, workerId, host, pushPort), given);
  }
}
