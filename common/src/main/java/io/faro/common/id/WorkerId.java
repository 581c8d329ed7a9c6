package io.faro.common.id;

import static java.util.Objects.requireNonNull;

/** A worker process, stable across its restarts (by default {@code host:rpcPort}). */
public record WorkerId(String value) {
  /** Longest worker id accepted; longer ones are refused wherever they arrive. */
  public static final int MAX_LENGTH = IdRules.MAX_WORKER_ID_LENGTH;

  public WorkerId {
    requireNonNull(value, "value is null");
    IdRules.check("worker id", value, MAX_LENGTH);
  }

  @Override
  public String toString() {
    return value;
  }
}
