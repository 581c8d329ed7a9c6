package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import io.faro.common.auth.Identity;
import io.faro.common.batch.BatchFormat;
import io.faro.common.error.ErrorCode;
import io.faro.common.tls.Tls;
import io.faro.proto.MessageType;
import io.netty.channel.Channel;
import java.util.Set;

/**
 * What one connection to a server may send ({@link FrameLimits}), before and after it proved who it
 * is. With faro.auth.enabled a connection starts unproven: it may send only the handshake and the
 * requests its server serves to anyone ({@link RequestHandler#openToAnyone}), each frame at most
 * faro.network.max.unauthenticated.frame.size; any other frame is refused on its header, before a
 * byte of the rest is buffered. Once proven (or on a server that asks no proof, with faro.auth
 * .enabled false), a frame may be as large as the port takes. Either way a meta may hold at most
 * faro.network.max.meta.objects objects (a connection that proved the cluster secret, a member, any
 * number), a push's at most one part per batch header its body can hold and
 * faro.network.max.parts.per.push.
 *
 * <p>Confined to the connection's event loop (the identity it reads is set there).
 */
final class ServerFrameLimits implements FrameLimits {
  private final String serverName;
  private final Channel channel;
  private final boolean authenticates;
  private final NetworkOptions.Limits limits;
  private final Set<MessageType> open;

  /**
   * @param open what anyone may send to this server (with the handshake)
   */
  ServerFrameLimits(
      String serverName, Channel channel, NetworkSettings settings, Set<MessageType> open) {
    this.serverName = requireNonNull(serverName, "serverName is null");
    this.channel = requireNonNull(channel, "channel is null");
    this.authenticates = settings.auth().enabled();
    this.limits = settings.limits();
    this.open = Set.copyOf(open);
  }

  @Override
  public boolean proven() {
    return !authenticates || !Identity.of(channel).equals(Identity.ANONYMOUS);
  }

  @Override
  public Refusal refusal(MessageType type, int frameLength, int metaLength) {
    if (Tls.unencrypted(channel)) {
      // Said first: what the client must change is its TLS, whatever else it sends.
      return new Refusal(ErrorCode.UNAUTHENTICATED, ServerAuth.unencrypted(serverName));
    }
    if (proven()) {
      return type == MessageType.PUSH_REQUEST ? pushRefusal(frameLength, metaLength) : null;
    }
    if (!ServerAuth.isHandshake(type) && !open.contains(type)) {
      return new Refusal(
          ErrorCode.UNAUTHENTICATED,
          serverName
              + " takes "
              + type
              + " only from a connection that proved who it is (faro.auth.enabled is true "
              + "there): this one did not authenticate");
    }
    if (frameLength + FrameCodec.LENGTH_FIELD > limits.unauthenticatedFrameSize()) {
      return new Refusal(
          ErrorCode.LIMIT_EXCEEDED,
          serverName
              + " takes frames of at most "
              + limits.unauthenticatedFrameSize()
              + " bytes before a connection proved who it is "
              + "(faro.network.max.unauthenticated.frame.size); this "
              + type
              + " has "
              + (frameLength + FrameCodec.LENGTH_FIELD));
    }
    return null;
  }

  /** Bytes one part of a push takes at most on the wire: a tag, a length, three varints. */
  static final int MAX_PART_BYTES = 2 + 3 * 11;

  /** Bytes of a push meta besides its parts at most: the shuffle's key, a few scalars. */
  static final int MAX_PUSH_META_OVERHEAD = 1024;

  /**
   * A push whose meta is longer than its parts could be, refused on the header: its frame is not
   * buffered (up to faro.network.max.frame.size, charged to the budget) to find out.
   */
  private Refusal pushRefusal(int frameLength, int metaLength) {
    int body = frameLength - FrameCodec.FIXED_AFTER_LENGTH - metaLength;
    long most =
        MAX_PUSH_META_OVERHEAD
            + (long) MAX_PART_BYTES * Math.min(limits.partsPerPush(), body / BatchFormat.HEADER);
    if (metaLength <= most) {
      return null;
    }
    return new Refusal(
        ErrorCode.LIMIT_EXCEEDED,
        serverName
            + " refused a push whose header is "
            + metaLength
            + " bytes: its "
            + body
            + "-byte body holds at most "
            + Math.min(limits.partsPerPush(), body / BatchFormat.HEADER)
            + " parts (one per 28 bytes, and faro.network.max.parts.per.push)");
  }

  @Override
  public int maxObjects(MessageType type, int bodyLength) {
    if (authenticates && Identity.of(channel).equals(Identity.CLUSTER)) {
      // A member: its heartbeat lists every shuffle the worker holds, however many.
      return Integer.MAX_VALUE;
    }
    if (type == MessageType.PUSH_REQUEST) {
      // The shuffle's key and its app id (and a few fields a newer client may add), and one part
      // per batch the body can hold.
      return 8 + Math.min(limits.partsPerPush(), bodyLength / BatchFormat.HEADER);
    }
    return limits.metaObjects();
  }
}
