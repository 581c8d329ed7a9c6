package io.faro.common.id;

import static java.util.Objects.requireNonNull;

import io.faro.common.log.LogSafe;

/**
 * A Spark (or other engine) application, as registered with the master. The value comes from the
 * engine and over the wire, so it may hold any character: {@link #toString()}, which log lines and
 * messages use, is made safe by {@link LogSafe#id}; {@link #value()} is the id itself.
 */
public record AppId(String value) {
  /** Longest app id accepted; longer ones are refused wherever they arrive. */
  public static final int MAX_LENGTH = IdRules.MAX_APP_ID_LENGTH;

  public AppId {
    requireNonNull(value, "value is null");
    IdRules.check("app id", value, MAX_LENGTH);
  }

  @Override
  public String toString() {
    return LogSafe.id(value);
  }
}
