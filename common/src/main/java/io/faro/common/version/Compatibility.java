package io.faro.common.version;

/**
 * What this release of Faro speaks and reads, and so which releases it works with (see
 * docs/upgrading.md).
 *
 * <ul>
 *   <li><b>Wire protocol</b>: each authenticated connection states its protocol version in the
 *       handshake ({@code AuthStartRequest.protocol_version}, answered in {@code
 *       AuthStartResponse.protocol_version}) and speaks the lower of the two ends' versions.
 *       Version 1 is every release from before versioned handshakes (a handshake without the
 *       field). A server answers each version from {@link #OLDEST_PROTOCOL} up, unless the
 *       cluster's feature level needs a newer one ({@link FeatureLevel#oldestProtocol}); then it
 *       refuses the connection with an error naming both versions.
 *   <li><b>Cluster feature level</b>: what the masters write into their log and snapshots, and what
 *       the cluster asks of its peers. A level is used only once every master of the group supports
 *       it ({@link FeatureLevel}); until it is raised, a roll back to the release before is
 *       possible.
 * </ul>
 */
public final class Compatibility {
  /** The wire protocol this release speaks. */
  public static final int PROTOCOL = 2;

  /**
   * The oldest wire protocol this release answers: 1, every release before versioned handshakes.
   */
  public static final int OLDEST_PROTOCOL = 1;

  private Compatibility() {}

  /**
   * This release's version, from the jars' manifests ("dev" when run from a build's class
   * directories).
   */
  public static String release() {
    String v = Compatibility.class.getPackage().getImplementationVersion();
    return v == null || v.isBlank() ? "dev" : v;
  }

  /**
   * The protocol a connection speaks when one end states {@code stated} (0: a peer from before
   * versioned handshakes) and this end speaks {@link #PROTOCOL}.
   */
  public static int negotiated(int stated) {
    return Math.min(Math.max(stated, OLDEST_PROTOCOL), PROTOCOL);
  }
}
