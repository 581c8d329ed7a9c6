package io.faro.common.id;

import static java.util.Objects.requireNonNull;

import io.faro.common.log.LogSafe;

/**
 * A worker process, stable across its restarts (by default {@code host:rpcPort}). Configured by
 * the operator and sent over the wire, so {@link #toString()}, which log lines and messages use,
 * is made safe by {@link LogSafe#id}; {@link #value()} is the id itself.
 */
public record WorkerId(String value) {
  public WorkerId {
    requireNonNull(value, "value is null");
    if (value.isBlank()) {
      throw new IllegalArgumentException("worker id is blank");
    }
  }

  @Override
  public String toString() {
    return LogSafe.id(value);
  }
}
