package io.faro.worker.storage;

import java.util.Locale;
import java.util.Objects;

/**
 * What a disk's last check found. Only a healthy disk takes new partitions and more data; a full or
 * broken one makes its open partitions answer split, so that clients move them elsewhere.
 *
 * @param state healthy, full or broken
 * @param usableBytes what Faro may still write there (the file system's free space for this
 *     process, bounded by the disk's configured capacity); 0 when unknown
 * @param reason why the disk is not healthy; empty when it is
 */
public record DiskHealth(State state, long usableBytes, String reason) {
  /** A disk's condition. */
  public enum State {
    HEALTHY,
    FULL,
    BROKEN
  }

  /** Before the first check: assumed healthy. */
  static final DiskHealth UNCHECKED = new DiskHealth(State.HEALTHY, 0, "");

  public DiskHealth {
    Objects.requireNonNull(state, "state is null");
    Objects.requireNonNull(reason, "reason is null");
  }

  public boolean healthy() {
    return state == State.HEALTHY;
  }

  static DiskHealth broken(String reason) {
    return new DiskHealth(State.BROKEN, 0, reason);
  }

  /** "healthy", or the state and why, for logs and the status RPC. */
  public String describe() {
    return state == State.HEALTHY
        ? "healthy"
        : state.name().toLowerCase(Locale.ROOT) + ": " + reason;
  }
}
