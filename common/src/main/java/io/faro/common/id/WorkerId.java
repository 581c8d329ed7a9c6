package io.faro.common.id;

import static java.util.Objects.requireNonNull;

/** A worker process, stable across its restarts (by default {@code host:rpcPort}). */
public record WorkerId(String value) {
  public WorkerId {
    requireNonNull(value, "value is null");
    if (value.isBlank()) {
      throw new IllegalArgumentException("worker id is blank");
    }
  }

  @Override
  public String toString() {
    return value;
  }
}
