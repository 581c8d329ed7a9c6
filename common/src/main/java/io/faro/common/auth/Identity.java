package io.faro.common.auth;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.log.LogSafe;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.Locale;
import java.util.Optional;

/**
 * Who a connection proved to be. A connection starts {@link Kind#ANONYMOUS} and becomes another
 * identity by proving that it holds that identity's secret ({@link Handshake}); each server decides
 * per request which identities may send it ({@code RequestHandler.refusal}).
 *
 * <p>{@link Kind#CLUSTER}: a master or worker of this cluster (holds the cluster secret). {@link
 * Kind#ADMIN}: an operator's tool (holds the admin secret). {@link Kind#APP}: one registration of
 * one application, named by its app id and the public nonce of that registration (the secret is
 * derived from both: {@link AppSecrets}).
 *
 * @param app the application's id, for {@link Kind#APP} only (else empty)
 * @param nonce the registration's public nonce, for {@link Kind#APP} only (else empty)
 */
public record Identity(Kind kind, String app, String nonce) {
  /** The kinds of identity, by what proves them. */
  public enum Kind {
    ANONYMOUS,
    CLUSTER,
    ADMIN,
    APP
  }

  public static final Identity ANONYMOUS = new Identity(Kind.ANONYMOUS, "", "");
  public static final Identity CLUSTER = new Identity(Kind.CLUSTER, "", "");
  public static final Identity ADMIN = new Identity(Kind.ADMIN, "", "");

  /** Longest identity name accepted from the wire: "app:", an app id, ":" and a nonce. */
  static final int MAX_WIRE_LENGTH = 256;

  private static final String APP_PREFIX = "app:";
  private static final AttributeKey<Identity> KEY = AttributeKey.valueOf("faro.identity");

  public Identity {
    requireNonNull(kind, "kind is null");
    requireNonNull(app, "app is null");
    requireNonNull(nonce, "nonce is null");
    if ((kind == Kind.APP) != !app.isEmpty() || (kind == Kind.APP) != !nonce.isEmpty()) {
      throw new IllegalArgumentException("an app identity, and only one, names an app and a nonce");
    }
  }

  /** The identity of one registration of {@code app}. */
  public static Identity app(AppId app, String nonce) {
    if (!AppSecrets.isNonce(nonce)) {
      throw new IllegalArgumentException("not a registration nonce: " + nonce);
    }
    return new Identity(Kind.APP, app.value(), nonce);
  }

  /** The name a client sends to claim this identity. */
  public String wire() {
    return kind == Kind.APP ? APP_PREFIX + app + ":" + nonce : kind.name().toLowerCase(Locale.ROOT);
  }

  /** Whether this is an app identity of {@code appId}, whatever the registration. */
  public boolean isApp(String appId) {
    return kind == Kind.APP && app.equals(appId);
  }

  /**
   * The identity a client claims by {@code name}; INVALID_REQUEST for a name no one can prove (too
   * long, unknown, malformed, or anonymous).
   */
  public static Identity fromWire(String name) {
    if (name.length() > MAX_WIRE_LENGTH) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "identity name of " + name.length() + " characters, at most " + MAX_WIRE_LENGTH);
    }
    if (name.startsWith(APP_PREFIX)) {
      int colon = name.lastIndexOf(':');
      String nonce = name.substring(colon + 1);
      if (colon <= APP_PREFIX.length() || !AppSecrets.isNonce(nonce)) {
        throw new FaroException(
            ErrorCode.INVALID_REQUEST, "an app identity is app:<app id>:<registration nonce>");
      }
      try {
        return app(new AppId(name.substring(APP_PREFIX.length(), colon)), nonce);
      } catch (IllegalArgumentException e) {
        throw new FaroException(ErrorCode.INVALID_REQUEST, "bad app identity: " + e.getMessage());
      }
    }
    for (Kind kind : Kind.values()) {
      if (kind != Kind.ANONYMOUS && kind != Kind.APP) {
        Identity identity = new Identity(kind, "", "");
        if (identity.wire().equals(name)) {
          return identity;
        }
      }
    }
    throw new FaroException(
        ErrorCode.INVALID_REQUEST,
        "unknown identity '" + LogSafe.id(name) + "' (cluster, admin or app:...)");
  }

  /** What {@code channel} proved to be; anonymous until it authenticates. */
  public static Identity of(Channel channel) {
    Identity identity = channel.attr(KEY).get();
    return identity == null ? ANONYMOUS : identity;
  }

  /**
   * Marks {@code channel} as proven to be {@code identity}; only the transport's handshake does.
   */
  public static void bind(Channel channel, Identity identity) {
    channel.attr(KEY).set(identity);
  }

  /**
   * Empty when {@code who} is {@code needed}, else why {@code what} is refused: the refusal a
   * request handler returns for a request only {@code needed} may send.
   */
  public static Optional<String> require(Identity needed, Identity who, Object what) {
    if (who.equals(needed)) {
      return Optional.empty();
    }
    return Optional.of(
        what
            + " needs a connection authenticated as "
            + needed.wire()
            + ", this one is "
            + who.wire()
            + (needed.equals(ADMIN)
                ? " (give the tool faro.auth.admin.secret.file)"
                : needed.kind() == Kind.CLUSTER ? " (faro.auth.cluster.secret.file)" : ""));
  }

  /**
   * Empty when {@code who} is an app identity of {@code appId} (any registration when {@code nonce}
   * is empty, else that one), else why {@code what}, which acts on {@code appId}, is refused.
   */
  public static Optional<String> requireApp(String appId, String nonce, Identity who, Object what) {
    if (who.isApp(appId) && (nonce.isEmpty() || who.nonce().equals(nonce))) {
      return Optional.empty();
    }
    return Optional.of(
        what
            + " acts on app "
            + LogSafe.id(appId)
            + ": it needs a connection authenticated as that app, this one is "
            + (who.kind() == Kind.APP ? "app " + LogSafe.id(who.app()) : who.wire())
            + (who.isApp(appId) ? " of another registration" : ""));
  }
}
