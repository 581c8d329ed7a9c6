package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ReferenceCounted;

/**
 * A frame to write: a meta and a body, a {@link ByteBuf}, a {@link FileRegion} or null. A chunk is
 * read into buffers on the disk's reader threads first, or sent as a region of its file only when a
 * reader thread found every page of it in the page cache, so that a body never makes an event loop
 * wait on a disk (a page evicted between that check and the send is read by the send).
 *
 * <p>Ownership: the frame takes ownership of the body and is itself reference counted, so that
 * Netty releases the body when a write fails before the encoder (closed channel). The encoder hands
 * a retained body down the pipeline and releases the frame.
 */
public final class OutboundFrame extends AbstractReferenceCounted {
  private final FrameKind kind;
  private final long requestId;
  private final Message meta;
  private final ReferenceCounted body;

  public OutboundFrame(FrameKind kind, long requestId, Message meta, ByteBuf body) {
    this(kind, requestId, meta, (ReferenceCounted) body);
  }

  /** A frame whose body is sent from a file: only on a connection without TLS. */
  public static OutboundFrame fromFile(
      FrameKind kind, long requestId, Message meta, FileRegion body) {
    return new OutboundFrame(kind, requestId, meta, requireNonNull(body, "body is null"));
  }

  private OutboundFrame(FrameKind kind, long requestId, Message meta, ReferenceCounted body) {
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

  /** The body (a {@link ByteBuf} or a {@link FileRegion}), borrowed from this frame. */
  ReferenceCounted body() {
    return body;
  }

  long bodyLength() {
    if (body == null) {
      return 0;
    }
    return body instanceof FileRegion region
        ? region.count() - region.transferred()
        : ((ByteBuf) body).readableBytes();
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
