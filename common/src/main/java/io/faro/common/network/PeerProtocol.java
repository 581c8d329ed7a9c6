package io.faro.common.network;

import io.faro.common.version.Compatibility;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * The wire protocol a server connection speaks, as its handshake settled it (see {@link
 * Compatibility}): protocol 1 until then, and on connections that never handshake (authentication
 * off). Handlers read it where an older protocol is answered differently (a worker takes a
 * reservation without the masters' placement grant only from protocol 1, at feature level 1).
 */
public final class PeerProtocol {
  private static final AttributeKey<Integer> KEY = AttributeKey.valueOf("faro.protocol");

  private PeerProtocol() {}

  /** The protocol {@code channel} speaks. */
  public static int of(Channel channel) {
    Integer version = channel.attr(KEY).get();
    return version == null ? Compatibility.OLDEST_PROTOCOL : version;
  }

  /** Records the protocol the handshake settled; only the transport's handshake does. */
  static void bind(Channel channel, int version) {
    channel.attr(KEY).set(version);
  }
}
