package io.faro.common.id;

import static java.util.Objects.requireNonNull;

import io.faro.common.log.LogSafe;

/**
 * A worker process, stable across its restarts (by default {@code host:rpcPort}). Configured by the
 * operator and sent over the wire, so {@link #toString()}, which log lines and messages use, is
 * made safe by {@link LogSafe#id}; {@link #value()} is the id itself.
 */
public record WorkerId(String value) {
  /** Longest worker id accepted; longer ones are refused wherever they arrive. */
  public static final int MAX_LENGTH = IdRules.MAX_WORKER_ID_LENGTH;

  public WorkerId {
    requireNonNull(value, "value is null");
    IdRules.check("worker id", value, MAX_LENGTH);
  }

  @Override
  public String toString() {
    return LogSafe.id(value);
  }
}
