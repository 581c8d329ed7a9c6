package io.faro.common.auth;

import static io.faro.common.config.ConfigOption.booleanOption;
import static io.faro.common.config.ConfigOption.stringOption;

import io.faro.common.config.ConfigException;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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

  /**
   * What a process holds: whether authentication is on, and the secrets it was given.
   *
   * @param cluster the cluster secret; present whenever a member has authentication on. A process
   *     that holds it derives the secret of every app identity ({@link AppSecrets})
   * @param admin the operators' secret, when given
   * @param apps app identities whose secrets this process was handed (a driver's own)
   * @param self what a server of this process is, as clients name it in their handshake ({@link
   *     Handshake#MASTER}, or "worker@host" to which the server adds ":port"); a member's (cluster
   *     or admin) proof meant for another server is refused. Empty: not checked
   */
  public record Settings(
      boolean enabled,
      Optional<Secret> cluster,
      Optional<Secret> admin,
      Map<Identity, Secret> apps,
      String self) {
    public static final Settings OFF = new Settings(false, Optional.empty(), Optional.empty());

    public Settings {
      apps = Map.copyOf(apps);
      Objects.requireNonNull(self, "self is null");
    }

    public Settings(boolean enabled, Optional<Secret> cluster, Optional<Secret> admin) {
      this(enabled, cluster, admin, Map.of(), "");
    }

    /** A driver's: authentication on, and the one app identity it proves and checks. */
    public static Settings forApp(Identity app, Secret secret) {
      return new Settings(true, Optional.empty(), Optional.empty(), Map.of(app, secret), "");
    }

    /** These settings for a server that clients reach as {@code self} (see {@link #self}). */
    public Settings withSelf(String self) {
      return new Settings(enabled, cluster, admin, apps, self);
    }

    /** The secret that proves {@code identity}, if this process holds or can derive it. */
    public Optional<Secret> secretOf(Identity identity) {
      return switch (identity.kind()) {
        case CLUSTER -> cluster;
        case ADMIN -> admin;
        case APP ->
            apps.containsKey(identity)
                ? Optional.of(apps.get(identity))
                : cluster.map(
                    c -> AppSecrets.derive(c, new AppId(identity.app()), identity.nonce()));
        case ANONYMOUS -> Optional.empty();
      };
    }

    /**
     * These settings, if a member may run with them: with authentication on (the default), the
     * cluster secret must be given.
     *
     * @throws ConfigException naming the key, how to make a secret and how to turn authentication
     *     off
     */
    public Settings checkedAsMember() {
      Settings settings = this;
      if (settings.enabled && settings.cluster.isEmpty()) {
        throw new ConfigException(
            "no cluster secret: Faro authenticates its members and applications by default, and "
                + CLUSTER_SECRET_FILE.key()
                + " must name a file holding the secret every master and worker shares. Make one "
                + "with: bin/faro secret --out /etc/faro/cluster.secret (or: openssl rand -hex 32 "
                + "> FILE; chmod 600 FILE), give the same file to every member, and one made the "
                + "same way as "
                + ADMIN_SECRET_FILE.key()
                + " to members and operators. bin/faro local-cluster, the Ansible role and the "
                + "compose file make both. On a network only the cluster and its applications "
                + "reach, "
                + ENABLED.key()
                + "=false turns authentication off");
      }
      return settings;
    }

    /**
     * What a member with these settings logs at start and every hour when authentication is off, or
     * empty when it is on.
     */
    public Optional<String> offWarning(String member) {
      if (enabled) {
        return Optional.empty();
      }
      return Optional.of(
          ENABLED.key()
              + " is false: this "
              + member
              + " takes every request from anyone who can reach its ports (registering workers, "
              + "operators' calls, reserving, pushing to, committing and reading any "
              + "application's shuffles). Keep its ports on a network only the cluster and its "
              + "applications reach, or turn authentication on (docs/security.md)");
    }

    /** An operator's tool's or a client's settings: every secret is optional. */
    public static Settings tool(FaroConf conf) {
      if (!conf.get(ENABLED)) {
        return OFF;
      }
      return new Settings(true, secret(conf, CLUSTER_SECRET_FILE), secret(conf, ADMIN_SECRET_FILE));
    }

    private static Optional<Secret> secret(FaroConf conf, ConfigOption<String> option) {
      String file = conf.get(option).strip();
      return file.isEmpty()
          ? Optional.empty()
          : Optional.of(Secret.read(Path.of(file), option.key()));
    }
  }

  /** What a client proves when it connects: nothing, or one identity with its secret. */
  public record Credentials(Identity identity, Optional<Secret> secret) {
    public static final Credentials NONE = new Credentials(Identity.ANONYMOUS, Optional.empty());

    /** Proves {@code identity} with the secret {@code settings} hold for it; none when off. */
    public static Credentials as(Identity identity, Settings settings) {
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
