package io.faro.common.auth;

import static io.faro.common.config.ConfigOption.booleanOption;
import static io.faro.common.config.ConfigOption.stringOption;

import io.faro.common.config.ConfigOption;
import java.util.List;
import java.util.Optional;

/** Who may do what on a cluster: the secrets that masters, workers and operators' tools hold. */
public final class AuthOptions {
  public static final ConfigOption<Boolean> ENABLED =
      booleanOption(
          "faro.auth.enabled",
          true,
          "Authenticate everyone, as shipped. Masters and workers then accept a worker's "
              + "registration and heartbeats, and a primary's forwarded pushes, only from a "
              + "connection that proved it holds the cluster secret, and every state-changing admin "
              + "call (exclude, include, decommission, stop, leader transfer, admission rules) only "
              + "from one that proved it holds the admin secret; before a connection proved "
              + "anything, only the handshake and a few open requests (an app's registration, "
              + "status) are parsed, in small frames. Each application gets its own secret when it "
              + "registers, and every request on its shuffles (slots, reservations, pushes, "
              + "commits, fetches, unregistering) must come from a connection that proved it: an "
              + "application cannot touch another's shuffles even knowing their ids. Each proof is "
              + "an HMAC over fresh nonces of both sides, once per connection. A member with no "
              + "faro.auth.cluster.secret.file refuses to start (bin/faro local-cluster, the "
              + "Ansible role and the compose file make the secrets). Spark applications learn "
              + "theirs from the masters and need no setting. false, on a network only the cluster "
              + "and its applications reach, turns all of it off and is warned about at every "
              + "start and every hour; a driver's lifecycle port still answers only its own "
              + "executors.");
  public static final ConfigOption<String> CLUSTER_SECRET_FILE =
      stringOption(
          "faro.auth.cluster.secret.file",
          "",
          "With faro.auth.enabled: a file holding the secret every master and worker shares (at "
              + "least 16 bytes of text, e.g. from openssl rand -hex 32; readable by the Faro user "
              + "only). Required on masters and workers.");
  public static final ConfigOption<String> ADMIN_SECRET_FILE =
      stringOption(
          "faro.auth.admin.secret.file",
          "",
          "With faro.auth.enabled: a file holding the operators' secret, on masters and workers "
              + "(which check it) and for bin/faro admin (which proves it). Unset on a member, "
              + "that member refuses every state-changing admin call.");

  public static final List<ConfigOption<?>> ALL =
      List.of(ENABLED, CLUSTER_SECRET_FILE, ADMIN_SECRET_FILE);

  private AuthOptions() {}

  /** What a client proves when it connects: nothing, or one identity with its secret. */
  public record Credentials(Identity identity, Optional<Secret> secret) {
    public static final Credentials NONE = new Credentials(Identity.ANONYMOUS, Optional.empty());

    /** Proves {@code identity} with the secret {@code settings} hold for it; none when off. */
    public static Credentials as(Identity identity, AuthSettings settings) {
      if (!settings.enabled()) {
        return NONE;
      }
      return new Credentials(identity, settings.secretOf(identity));
    }

    /** Proves {@code app} with {@code secret} (a driver's or executor's). */
    public static Credentials app(Identity app, Secret secret) {
      return new Credentials(app, Optional.of(secret));
    }

    public boolean proves() {
      return !identity.equals(Identity.ANONYMOUS);
    }
  }
}
