package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.AppId;

/** An application with the leader time of its first registration. */
public record RegisteredApp(AppId id, long registeredAtMs) {
  public RegisteredApp {
    requireNonNull(id, "id is null");
  }
}
