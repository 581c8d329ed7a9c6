package io.faro.common.network;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.LogSafe;
import io.faro.proto.ErrorResponse;

/**
 * An error answered by a remote server; carries its code and, for NOT_LEADER, a hint. The remote's
 * message is made safe for log lines ({@link LogSafe#text}) as it arrives: whoever logs or wraps it
 * later need not know that a peer wrote it.
 */
public final class RemoteException extends FaroException {
  private static final long serialVersionUID = 1L;

  private final String leaderHint;

  public RemoteException(HostPort remote, ErrorResponse error) {
    super(
        ErrorCode.fromProto(error.getCode()),
        remote + " answered: " + LogSafe.text(error.getMessage()));
    this.leaderHint = error.getLeaderHint();
  }

  public String leaderHint() {
    return leaderHint;
  }
}
