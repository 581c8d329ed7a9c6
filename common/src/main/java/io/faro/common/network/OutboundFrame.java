package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCountUtil;

/**
 * A frame to write. The body is a {@link ByteBuf}, a {@link FileRegion} (served zero-copy from a
 * file) or null.
 *
 * <p>Ownership: the frame takes ownership of the body and is itself reference counted, so that
 * Netty releases the body when a write fails before the encoder (closed channel). The encoder hands
 * a retained body down the pipeline and releases the frame.
 */
public final class OutboundFrame extends AbstractReferenceCounted {
  private final FrameKind kind;
  private final long requestId;
  private final Message meta;
  private final Object body;

  public OutboundFrame(FrameKind kind, long requestId, Message meta, Object body) {
    this.kind = requireNonNull(kind, "kind is null");
    this.requestId = requestId;
    this.meta = requireNonNull(meta, "meta is null");
    if (body != null && !(body instanceof ByteBuf) && !(body instanceof FileRegion)) {
      ReferenceCountUtil.safeRelease(body);
      throw new IllegalArgumentException(
          "body must be a ByteBuf or FileRegion: " + body.getClass());
    }
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
  Object body() {
    return body;
  }

  long bodyLength() {
    if (body instanceof ByteBuf b) {
      return b.readableBytes();
    }
    if (body instanceof FileRegion r) {
      return r.count();
    }
    return 0;
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
