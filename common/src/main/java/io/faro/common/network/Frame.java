package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.proto.MessageType;
import io.netty.buffer.ByteBuf;

/**
 * A decoded inbound frame: kind, message type, request id, the parsed protobuf header and the raw
 * body. The body is a retained slice of the received bytes, never copied; whoever holds the frame
 * releases it (see {@link #release()}) exactly once.
 */
public final class Frame {
  private final FrameKind kind;
  private final MessageType type;
  private final long requestId;
  private final Message meta;
  private final ByteBuf body;

  Frame(FrameKind kind, MessageType type, long requestId, Message meta, ByteBuf body) {
    this.kind = requireNonNull(kind, "kind is null");
    this.type = requireNonNull(type, "type is null");
    this.requestId = requestId;
    this.meta = requireNonNull(meta, "meta is null");
    this.body = requireNonNull(body, "body is null");
  }

  public FrameKind kind() {
    return kind;
  }

  public MessageType type() {
    return type;
  }

  public long requestId() {
    return requestId;
  }

  public Message meta() {
    return meta;
  }

  @SuppressWarnings("unchecked")
  public <M extends Message> M meta(Class<M> expected) {
    if (!expected.isInstance(meta)) {
      throw new IllegalStateException(
          "expected " + expected.getSimpleName() + " but frame holds " + type);
    }
    return (M) meta;
  }

  /** The raw body; borrowed from this frame. */
  public ByteBuf body() {
    return body;
  }

  public void release() {
    body.release();
  }

  @Override
  public String toString() {
    return kind + " " + type + " #" + requestId + " body=" + body.readableBytes();
  }
}
