package io.faro.master.raft;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;

/**
 * This master cannot serve the request because it is not the ready Raft leader. Retryable: the
 * answer carries the leader's RPC address when known, so a client can go there at once.
 */
public final class NotLeaderException extends FaroException {
  private static final long serialVersionUID = 1L;

  private final String leaderHint;

  /**
   * @param leaderHint the leader's RPC {@code host:port}, or empty when unknown
   */
  public NotLeaderException(String message, String leaderHint) {
    super(ErrorCode.NOT_LEADER, message);
    this.leaderHint = requireNonNull(leaderHint, "leaderHint is null");
  }

  public String leaderHint() {
    return leaderHint;
  }
}
