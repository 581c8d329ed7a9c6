package io.faro.common.version;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;

/**
 * The cluster's feature level: what the masters write into their replicated log and snapshots, and
 * what the cluster's servers ask of the connections they take. The masters keep the level in their
 * replicated state; the leader raises it only when every master of the group supports the new one
 * ({@code bin/faro admin feature-level set}, or {@code faro.master.feature.level.auto}), and never
 * lowers it. A log entry, snapshot field or wire rule that needs a level is used only at that
 * level, so until the level is raised every member can still be rolled back to the release before.
 *
 * <p>Levels of this release:
 *
 * <ol>
 *   <li>The releases before feature levels: their log entries and snapshot fields, connections of
 *       protocol 1 (no version stated) taken as those releases took them.
 *   <li>The level is recorded in the log and the snapshots (a master that meets a higher one than
 *       it supports stops, saying which it needs); every authenticated connection speaks protocol
 *       2, so that applications with a client jar of protocol 1 are refused (naming both versions)
 *       and every worker takes reservations only with the masters' placement grants.
 * </ol>
 */
public final class FeatureLevel {
  /** The lowest level this release runs at: a group made by the releases before levels. */
  public static final int MIN = 1;

  /** The highest level this release supports, and the level a new group of it starts at. */
  public static final int MAX = 2;

  private FeatureLevel() {}

  /** What level {@code level} adds, for the operator's tools. */
  public static String describe(int level) {
    return switch (level) {
      case 1 -> "releases before feature levels: protocol 1 clients taken as before";
      case 2 -> "level recorded in log and snapshots; protocol 2 required (placement grants)";
      default -> "unknown to this release";
    };
  }

  /** Whether this release can run in a group at {@code level}. */
  public static boolean supported(int level) {
    return level >= MIN && level <= MAX;
  }

  /** The oldest wire protocol the cluster's servers take at {@code level}. */
  public static int oldestProtocol(int level) {
    return level >= 2 ? 2 : Compatibility.OLDEST_PROTOCOL;
  }

  /** The snapshot format the masters write at {@code level} (a snapshot of level 1 has none). */
  public static int snapshotFormat(int level) {
    return level >= 2 ? 2 : 1;
  }

  /**
   * Stops a process of this release that would run in a group at {@code level} beyond what it
   * supports: {@code where} says what holds the level (a snapshot, a log entry).
   */
  public static FaroException unsupported(int level, String where) {
    return new FaroException(
        ErrorCode.UNSUPPORTED_VERSION,
        where
            + " needs cluster feature level "
            + level
            + ", and this Faro ("
            + Compatibility.release()
            + ") supports levels "
            + MIN
            + " to "
            + MAX
            + ": start it from the release that raised the level to "
            + level
            + " or a later one");
  }
}
