package io.faro.common.auth;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.Optional;

/**
 * Who a connection proved to be. A connection starts {@link Kind#ANONYMOUS} and becomes another
 * identity by proving that it holds that identity's secret ({@link Handshake}); each server decides
 * per request which identities may send it ({@code RequestHandler.refusal}).
 *
 * <p>{@link Kind#CLUSTER}: a master or worker of this cluster (holds the cluster secret). {@link
 * Kind#ADMIN}: an operator's tool (holds the admin secret).
 */
public record Identity(Kind kind) {
  /** The kinds of identity, by what proves them. */
  public enum Kind {
    ANONYMOUS,
    CLUSTER,
    ADMIN
  }

  public static final Identity ANONYMOUS = new Identity(Kind.ANONYMOUS);
  public static final Identity CLUSTER = new Identity(Kind.CLUSTER);
  public static final Identity ADMIN = new Identity(Kind.ADMIN);

  /** Longest identity name accepted from the wire. */
  static final int MAX_WIRE_LENGTH = 64;

  private static final AttributeKey<Identity> KEY = AttributeKey.valueOf("faro.identity");

  public Identity {
    requireNonNull(kind, "kind is null");
  }

  /** The name a client sends to claim this identity. */
  public String wire() {
    return kind.name().toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * The identity a client claims by {@code name}; INVALID_REQUEST for a name no one can prove (too
   * long, unknown, or anonymous).
   */
  public static Identity fromWire(String name) {
    if (name.length() > MAX_WIRE_LENGTH) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "identity name of " + name.length() + " characters, at most " + MAX_WIRE_LENGTH);
    }
    for (Kind kind : Kind.values()) {
      if (kind != Kind.ANONYMOUS && new Identity(kind).wire().equals(name)) {
        return new Identity(kind);
      }
    }
    throw new FaroException(
        ErrorCode.INVALID_REQUEST, "unknown identity '" + name + "' (cluster or admin)");
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
                : " (faro.auth.cluster.secret.file)"));
  }
}
