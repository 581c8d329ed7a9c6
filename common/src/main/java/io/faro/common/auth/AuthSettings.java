package io.faro.common.auth;

import io.faro.common.config.ConfigException;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a process holds: whether authentication is on, and the secrets it was given.
 *
 * @param cluster the cluster secret; present whenever a member has authentication on. A process
 *     that holds it derives the secret of every app identity ({@link AppSecrets})
 * @param admin the operators' secret, when given
 * @param apps app identities whose secrets this process was handed (a driver's own)
 * @param self what a server of this process is, as clients name it in their handshake ({@link
 *     Handshake#MASTER}, or "worker@host" to which the server adds ":port"); a member's (cluster or
 *     admin) proof meant for another server is refused. Empty: not checked
 */
public record AuthSettings(
    boolean enabled,
    Optional<Secret> cluster,
    Optional<Secret> admin,
    Map<Identity, Secret> apps,
    String self) {
  public static final AuthSettings OFF =
      new AuthSettings(false, Optional.empty(), Optional.empty());

  public AuthSettings {
    apps = Map.copyOf(apps);
    Objects.requireNonNull(self, "self is null");
  }

  public AuthSettings(boolean enabled, Optional<Secret> cluster, Optional<Secret> admin) {
    this(enabled, cluster, admin, Map.of(), "");
  }

  /** A driver's: authentication on, and the one app identity it proves and checks. */
  public static AuthSettings forApp(Identity app, Secret secret) {
    return new AuthSettings(true, Optional.empty(), Optional.empty(), Map.of(app, secret), "");
  }

  /** These settings for a server that clients reach as {@code self} (see {@link #self}). */
  public AuthSettings withSelf(String self) {
    return new AuthSettings(enabled, cluster, admin, apps, self);
  }

  /** The secret that proves {@code identity}, if this process holds or can derive it. */
  public Optional<Secret> secretOf(Identity identity) {
    return switch (identity.kind()) {
      case CLUSTER -> cluster;
      case ADMIN -> admin;
      case APP ->
          apps.containsKey(identity)
              ? Optional.of(apps.get(identity))
              : cluster.map(c -> AppSecrets.derive(c, new AppId(identity.app()), identity.nonce()));
      case ANONYMOUS -> Optional.empty();
    };
  }

  /**
   * These settings, if a member may run with them: with authentication on (the default), the
   * cluster secret must be given.
   *
   * @throws ConfigException naming the key, how to make a secret and how to turn authentication off
   */
  public AuthSettings checkedAsMember() {
    AuthSettings settings = this;
    if (settings.enabled && settings.cluster.isEmpty()) {
      throw new ConfigException(
          "no cluster secret: Faro authenticates its members and applications by default, and "
              + AuthOptions.CLUSTER_SECRET_FILE.key()
              + " must name a file holding the secret every master and worker shares. Make one "
              + "with: bin/faro secret --out /etc/faro/cluster.secret (or: openssl rand -hex 32 "
              + "> FILE; chmod 600 FILE), give the same file to every member, and one made the "
              + "same way as "
              + AuthOptions.ADMIN_SECRET_FILE.key()
              + " to members and operators. bin/faro local-cluster, the Ansible role and the "
              + "compose file make both. On a network only the cluster and its applications "
              + "reach, "
              + AuthOptions.ENABLED.key()
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
        AuthOptions.ENABLED.key()
            + " is false: this "
            + member
            + " takes every request from anyone who can reach its ports (registering workers, "
            + "operators' calls, reserving, pushing to, committing and reading any "
            + "application's shuffles). Keep its ports on a network only the cluster and its "
            + "applications reach, or turn authentication on (docs/security.md)");
  }

  /** An operator's tool's or a client's settings: every secret is optional. */
  public static AuthSettings tool(FaroConf conf) {
    if (!conf.get(AuthOptions.ENABLED)) {
      return OFF;
    }
    return new AuthSettings(
        true,
        secret(conf, AuthOptions.CLUSTER_SECRET_FILE),
        secret(conf, AuthOptions.ADMIN_SECRET_FILE));
  }

  private static Optional<Secret> secret(FaroConf conf, ConfigOption<String> option) {
    String file = conf.get(option).strip();
    return file.isEmpty()
        ? Optional.empty()
        : Optional.of(Secret.read(Path.of(file), option.key()));
  }
}
