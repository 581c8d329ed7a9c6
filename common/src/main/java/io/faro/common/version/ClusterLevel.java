package io.faro.common.version;

/**
 * The cluster's feature level as a member that does not replicate it (a worker) last heard it from
 * the leader; unknown until it first hears. Unknown, the member takes connections of every protocol
 * it answers (a restarted worker must serve the old clients of a cluster in mid-roll before it
 * registered), but grants nothing that only level 1 allows. Thread-safe.
 */
public final class ClusterLevel {
  private volatile int level;

  /**
   * Records the level a master answered (0 from a master before feature levels: level 1); returns
   * whether it differs from the one heard before.
   */
  public boolean heard(int answered) {
    int now = Math.max(1, answered);
    int before = level;
    level = now;
    return now != before;
  }

  /** The level last heard, or 0 before any. */
  public int level() {
    return level;
  }

  /** Whether the cluster is known to run at level 1, as the releases before feature levels did. */
  public boolean knownAtFirstLevel() {
    return level == 1;
  }

  /**
   * The oldest wire protocol to take now: every one this release answers until the level is known.
   */
  public int oldestProtocol() {
    int known = level;
    return known == 0 ? Compatibility.OLDEST_PROTOCOL : FeatureLevel.oldestProtocol(known);
  }
}
