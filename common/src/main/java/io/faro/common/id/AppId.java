package io.faro.common.id;

import static java.util.Objects.requireNonNull;

/** A Spark (or other engine) application, as registered with the master. */
public record AppId(String value) {
  public AppId {
    requireNonNull(value, "value is null");
    if (value.isBlank()) {
      throw new IllegalArgumentException("app id is blank");
    }
  }

  @Override
  public String toString() {
    return value;
  }
}
