package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.netty.buffer.ByteBuf;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCountUtil;

/**
 * A frame to write: a meta and a body, a {@link ByteBuf} or null. A chunk read from a disk is read
 * into buffers on the disk's reader threads first, so a body never makes an event loop read a file.
 *
 * <p>Ownership: the frame takes ownership of the body and is itself reference counted, so that
 * Netty releases the body when a write fails before the encoder (closed channel). The encoder hands
 * a retained body down the pipeline and releases the frame.
 */
public final class OutboundFrame extends AbstractReferenceCounted {
  private final FrameKind kind;
  private final long requestId;
  private final Message meta;
  private final ByteBuf body;

  public OutboundFrame(FrameKind kind, long requestId, Message meta, ByteBuf body) {
    this.kind = requireNonNull(kind, "kind is null");
    this.requestId = requestId;
    this.meta = requireNonNull(meta, "meta is null");
    this.body = body;
  }

  public FrameKind kind() {
    return kind;
  }

  public long requestId() {
    return requestId;
  }

  public Message meta() {
    return meta;
  }

  /** The body, borrowed from this frame. */
  ByteBuf body() {
    return body;
  }

  long bodyLength() {
    return body == null ? 0 : body.readableBytes();
  }

  @Override
  protected void deallocate() {
    if (body != null) {
      ReferenceCountUtil.release(body);
    }
  }

  @Override
  public OutboundFrame touch(Object hint) {
    if (body != null) {
      ReferenceCountUtil.touch(body, hint);
    }
    return this;
  }
}
