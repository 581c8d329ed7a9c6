package io.faro.common.id;

import static java.util.Objects.requireNonNull;

/** A Spark (or other engine) application, as registered with the master. */
public record AppId(String value) {
  /** Longest app id accepted; longer ones are refused wherever they arrive. */
  public static final int MAX_LENGTH = IdRules.MAX_APP_ID_LENGTH;

  public AppId {
    requireNonNull(value, "value is null");
    IdRules.check("app id", value, MAX_LENGTH);
  }

  @Override
  public String toString() {
    return value;
  }
}
