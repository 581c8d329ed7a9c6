package io.faro.client.driver;

import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.id.AppId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.MessageType;
import java.util.Optional;

/**
 * The identity this app's executors prove to its lifecycle port, and which connections the port
 * serves: only those that prove it. With a cluster that authenticates applications, it is the
 * registration's, and everything after the registration proves it to every master and worker too.
 * Without, the executors still prove an identity of the app's own to this port, so that nobody else
 * can end its maps or read its file groups: one this driver makes (its nonce a hash of a token
 * nobody sees, its secret random) and hands its executors with the shuffle handles.
 *
 * <p>Keeps {@link MessageType}: the port's refusal names the type it was given, passed on as is.
 */
final class LifecycleAuth {
  private final AuthOptions.Credentials credentials;
  private final boolean clusterAuthenticates;

  /**
   * @param cluster the registration's credentials, when the masters authenticate applications
   */
  LifecycleAuth(AppId app, Optional<AuthOptions.Credentials> cluster) {
    this.clusterAuthenticates = cluster.isPresent();
    this.credentials = cluster.orElseGet(() -> ownCredentials(app));
  }

  /**
   * An identity of this app that only this driver and its executors know, for a cluster that does
   * not authenticate applications: its nonce is a hash of a token nobody sees, its secret random.
   */
  private static AuthOptions.Credentials ownCredentials(AppId app) {
    byte[] secret = AppSecrets.token();
    return AuthOptions.Credentials.app(
        Identity.app(app, AppSecrets.nonce(AppSecrets.token())), Secret.ofBytes(secret));
  }

  AuthOptions.Credentials credentials() {
    return credentials;
  }

  boolean clusterAuthenticates() {
    return clusterAuthenticates;
  }

  /** Before the port serves: a pool whose calls prove the app to the whole cluster, if it asks. */
  void beforeServing(ClientPool pool) {
    if (clusterAuthenticates) {
      pool.authenticateAs(credentials);
    }
  }

  /** The port's network settings: {@code network}, with the app's identity to be proven. */
  NetworkSettings portNetwork(NetworkSettings network) {
    return network.withAuth(
        AuthSettings.forApp(credentials.identity(), credentials.secret().orElseThrow()));
  }

  /**
   * Once the port serves at {@code endpoint}: without a cluster that authenticates, the pool's
   * calls to the port prove the app's own identity.
   */
  void serving(ClientPool pool, HostPort endpoint) {
    if (!clusterAuthenticates) {
      pool.authenticateAs(endpoint, credentials);
    }
  }

  /** Why a connection authenticated as {@code who} may not send {@code type}; empty: it may. */
  Optional<String> refusal(MessageType type, Identity who) {
    return Identity.require(credentials.identity(), who, type);
  }
}
