package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.AppId;

/**
 * An application with the leader time of its first registration and that registration's public
 * nonce (empty without faro.auth.enabled; see io.faro.common.auth.AppSecrets).
 */
public record RegisteredApp(AppId id, long registeredAtMs, String nonce) {
  public RegisteredApp {
    requireNonNull(id, "id is null");
    requireNonNull(nonce, "nonce is null");
  }
}
