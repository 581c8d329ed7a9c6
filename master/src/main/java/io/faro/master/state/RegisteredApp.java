package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.admission.AppProfile;
import io.faro.common.id.AppId;

/**
 * An application with the leader time of its first registration, that registration's public nonce
 * (empty without faro.auth.enabled; see io.faro.common.auth.AppSecrets) and who runs it.
 */
public record RegisteredApp(AppId id, long registeredAtMs, String nonce, AppProfile profile) {
  public RegisteredApp {
    requireNonNull(id, "id is null");
    requireNonNull(nonce, "nonce is null");
    requireNonNull(profile, "profile is null");
  }

  public RegisteredApp(AppId id, long registeredAtMs, String nonce) {
    this(id, registeredAtMs, nonce, AppProfile.UNKNOWN);
  }
}
