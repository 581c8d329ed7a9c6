package io.faro.common.network;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.faro.proto.MessageType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * Splits the byte stream into {@link Frame}s (layout: {@link FrameCodec}). A frame whose length is
 * below the header or above the maximum, or that carries an unknown kind, an unknown message type
 * or unparsable meta, raises {@link CorruptedFrameException} (or {@link TooLongFrameException});
 * {@link TransportServer} or {@link TransportClient} then logs the reason and closes this
 * connection only. After a failure every further byte is discarded.
 *
 * <p>The length is checked as soon as its four bytes arrive, before anything is buffered for the
 * frame. Received buffers are queued as they are, never merged, and a frame's body is built from
 * them one of two ways ({@link Bodies}, built by {@link FrameBodies}): as a composite of slices of
 * the received buffers (no copy: the worker's push port, whose bodies go to disk with gathering
 * writes), or copied once into one buffer of exactly the body's size (fetched chunks, which readers
 * scan byte by byte). A body that lies in one received buffer is a slice either way.
 *
 * <p>Confined to the channel's event loop. The queue owns the received buffers; the frame owns its
 * body.
 */
public final class FrameDecoder extends ChannelInboundHandlerAdapter {
  /** How a frame body spanning several received buffers is built. */
  public enum Bodies {
    /** Copied once into a buffer of the body's size: cheap random access for the reader. */
    CONTIGUOUS,
    /** A composite of slices of the received buffers: no copy at all. */
    COMPOSITE
  }

  /**
   * Hears how many bytes of frames still arriving a connection holds, as they change (a worker's
   * push port charges them to its memory budget). Called on the channel's event loop.
   */
  public interface PartialFrames {
    /** {@code delta} more (positive) or fewer (negative) bytes are held. */
    void held(long delta);
  }

  /** Reads smaller than this are copied together rather than queued one by one. */
  private static final int SMALL_READ = 4096;

  private static final int MERGE_BUFFER = 64 * 1024;

  /**
   * Reads of a connection that has not proved itself are copied into buffers of this size (its
   * frames are small), so that a receive buffer of 64 KiB is never kept for a few bytes of them.
   */
  private static final int UNPROVEN_MERGE_BUFFER = 8 * 1024;

  private final int maxFrameLength;
  private final Bodies bodies;
  private final PartialFrames partialFrames;
  private final FrameLimits limits;
  private final ArrayDeque<ByteBuf> received = new ArrayDeque<>();
  private long receivedBytes;

  /** Length (after the length field) of the frame being received, or -1 before its length. */
  private int frameLength = -1;

  /** The header of the frame being received, or null before all of it arrived. */
  private Header header;

  // Whether the held bytes are charged to partialFrames: from the connection's proof on.
  private boolean charging;

  private boolean failed;

  /** A frame's fixed header, read before the rest of the frame is waited for. */
  private record Header(
      int length,
      FrameKind kind,
      MessageType type,
      Parser<? extends Message> parser,
      long requestId,
      int metaLength) {
    int bodyLength() {
      return length - FrameCodec.FIXED_AFTER_LENGTH - metaLength;
    }
  }

  public FrameDecoder(int maxFrameLength) {
    this(maxFrameLength, Bodies.CONTIGUOUS);
  }

  public FrameDecoder(int maxFrameLength, Bodies bodies) {
    this(maxFrameLength, bodies, null);
  }

  /**
   * @param partialFrames hears the bytes held for frames still arriving, or null
   */
  public FrameDecoder(int maxFrameLength, Bodies bodies, PartialFrames partialFrames) {
    this(maxFrameLength, bodies, partialFrames, FrameLimits.NONE);
  }

  /**
   * @param limits what the connection may send, asked at each frame's header (a server's depend on
   *     whether the connection proved itself)
   */
  FrameDecoder(int maxFrameLength, Bodies bodies, PartialFrames partialFrames, FrameLimits limits) {
    if (maxFrameLength <= FrameCodec.FIXED_AFTER_LENGTH) {
      throw new IllegalArgumentException("maxFrameLength too small: " + maxFrameLength);
    }
    this.maxFrameLength = maxFrameLength;
    this.bodies = bodies;
    this.partialFrames = partialFrames;
    this.limits = Objects.requireNonNull(limits, "limits is null");
  }

  /** Whether bytes of a frame not yet whole are held. On the channel's event loop. */
  public boolean holdsPartialFrame() {
    return receivedBytes > 0 || frameLength >= 0;
  }

  /**
   * Charges {@code delta} held bytes to partialFrames once the connection proved itself: before,
   * what it holds is bounded by its small frames and charged to nothing, so that strangers cannot
   * fill a worker's push budget.
   */
  private void held(long delta) {
    if (partialFrames == null || delta == 0) {
      return;
    }
    if (!charging) {
      if (!limits.proven()) {
        return;
      }
      charging = true;
      // What it held before its proof is charged from now on too, and uncharged with the rest.
      delta += receivedBytes - delta;
    }
    partialFrames.held(delta);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf in = (ByteBuf) msg;
    if (failed || !in.isReadable()) {
      in.release();
      return;
    }
    try {
      enqueue(ctx, in);
      decodeAvailable(ctx);
    } catch (Throwable t) {
      // Corrupt input, or no memory for a body: either way this connection's stream is lost.
      failed = true;
      releaseReceived();
      ctx.fireExceptionCaught(t);
    }
  }

  /**
   * Queues {@code in}, which it takes ownership of. A small read is copied into the free space of
   * the last queued buffer (or a fresh one of {@link #MERGE_BUFFER} bytes) instead: a peer that
   * trickles a frame byte by byte would otherwise make the queue hold a whole receive buffer's
   * capacity per byte, far beyond faro.network.max.frame.size. Every read of a connection that has
   * not proved itself is copied so, into small buffers.
   */
  private void enqueue(ChannelHandlerContext ctx, ByteBuf in) {
    int n = in.readableBytes();
    boolean proven = limits.proven();
    if (n < SMALL_READ || !proven) {
      int mergeBuffer = proven ? MERGE_BUFFER : UNPROVEN_MERGE_BUFFER;
      try {
        while (in.isReadable()) {
          ByteBuf last = received.peekLast();
          if (last == null || !last.isWritable() || (proven && last.writableBytes() < n)) {
            last = ctx.alloc().directBuffer(mergeBuffer, mergeBuffer);
            received.addLast(last);
          }
          last.writeBytes(in, Math.min(in.readableBytes(), last.writableBytes()));
        }
      } finally {
        in.release();
      }
    } else {
      received.addLast(in);
    }
    receivedBytes += n;
    held(n);
  }

  private void decodeAvailable(ChannelHandlerContext ctx) {
    while (!failed) {
      if (frameLength < 0) {
        if (receivedBytes < FrameCodec.LENGTH_FIELD) {
          return;
        }
        // Checked as soon as it arrives: a garbage length costs nothing but the connection.
        frameLength = readLength();
      }
      if (header == null) {
        if (receivedBytes < FrameCodec.FIXED_AFTER_LENGTH) {
          return;
        }
        header = readHeader(frameLength);
        FrameLimits.Refusal refusal =
            limits.refusal(header.type(), header.length(), header.metaLength());
        if (refusal != null) {
          // Nothing more of this connection is read: it is answered and closed.
          failed = true;
          releaseReceived();
          ctx.fireChannelRead(new RefusedFrame(header.requestId(), header.type(), refusal));
          return;
        }
      }
      if (receivedBytes < header.length() - FrameCodec.FIXED_AFTER_LENGTH) {
        return;
      }
      Object frame = readFrame(ctx, header);
      header = null;
      frameLength = -1;
      ctx.fireChannelRead(frame);
    }
  }

  /**
   * A frame refused on its header by the connection's {@link FrameLimits}: passed up instead of a
   * {@link Frame}, so that the server answers it and closes the connection. Holds no buffer.
   */
  record RefusedFrame(long requestId, MessageType type, FrameLimits.Refusal refusal) {}

  private int readLength() {
    int length = readInt();
    if (length < FrameCodec.FIXED_AFTER_LENGTH || length > maxFrameLength) {
      throw FrameErrors.badLength(length, maxFrameLength);
    }
    return length;
  }

  /** Reads and checks the rest of the fixed header; throws on a frame that cannot be decoded. */
  private Header readHeader(int length) {
    byte kindByte = readByte();
    FrameKind kind = FrameKind.fromWire(kindByte);
    if (kind == null) {
      throw FrameErrors.unknownKind(kindByte);
    }
    int typeNumber = (readByte() << 8) | (readByte() & 0xff);
    MessageType type = MessageType.forNumber(typeNumber);
    Parser<? extends Message> parser = type == null ? null : MessageCodecs.parser(type);
    if (parser == null) {
      throw FrameErrors.unknownType(typeNumber);
    }
    long requestId = ((long) readInt() << 32) | (readInt() & 0xffffffffL);
    int metaLength = readInt();
    if (metaLength < 0 || length - FrameCodec.FIXED_AFTER_LENGTH - metaLength < 0) {
      throw FrameErrors.metaDoesNotFit(metaLength, length);
    }
    return new Header(length, kind, type, parser, requestId, metaLength);
  }

  /** The frame of header {@code h}, whose bytes have all arrived; or its refusal. */
  private Object readFrame(ChannelHandlerContext ctx, Header h) {
    byte[] metaBytes = new byte[h.metaLength()];
    readBytes(metaBytes);
    int maxObjects = limits.maxObjects(h.type(), h.bodyLength());
    if (maxObjects < Integer.MAX_VALUE) {
      try {
        MetaShape.check(MessageCodecs.descriptor(h.type()), metaBytes, maxObjects);
      } catch (MetaShape.Refused e) {
        failed = true;
        releaseReceived();
        return new RefusedFrame(h.requestId(), h.type(), FrameErrors.metaRefused(h.type(), e));
      }
    }
    Message meta;
    try {
      meta = h.parser().parseFrom(metaBytes);
    } catch (InvalidProtocolBufferException e) {
      throw FrameErrors.unparsableMeta(h.type(), e);
    }
    return new Frame(h.kind(), h.type(), h.requestId(), meta, readBody(ctx, h.bodyLength()));
  }

  /** The next {@code length} bytes as a buffer the caller owns. */
  private ByteBuf readBody(ChannelHandlerContext ctx, int length) {
    if (length == 0) {
      return Unpooled.EMPTY_BUFFER;
    }
    ByteBuf head = received.peekFirst();
    ByteBuf body =
        head.readableBytes() >= length
            ? FrameBodies.sliceOrCopy(ctx.alloc(), head, length)
            : FrameBodies.gather(ctx.alloc(), received, length, bodies);
    consumed(length);
    return body;
  }

  private byte readByte() {
    byte b = received.peekFirst().readByte();
    consumed(1);
    return b;
  }

  private int readInt() {
    ByteBuf head = received.peekFirst();
    if (head.readableBytes() >= Integer.BYTES) {
      int v = head.readInt();
      consumed(Integer.BYTES);
      return v;
    }
    int v = 0;
    for (int i = 0; i < Integer.BYTES; i++) {
      v = (v << 8) | (readByte() & 0xff);
    }
    return v;
  }

  private void readBytes(byte[] into) {
    int done = 0;
    while (done < into.length) {
      ByteBuf b = received.peekFirst();
      int n = Math.min(into.length - done, b.readableBytes());
      b.readBytes(into, done, n);
      done += n;
      consumed(n);
    }
  }

  /** Accounts for {@code n} bytes read from the head buffers and drops the emptied ones. */
  private void consumed(int n) {
    receivedBytes -= n;
    held(-n);
    while (!received.isEmpty() && !received.peekFirst().isReadable()) {
      received.pollFirst().release();
    }
  }

  private void releaseReceived() {
    ByteBuf b;
    while ((b = received.pollFirst()) != null) {
      b.release();
    }
    if (charging && receivedBytes != 0) {
      partialFrames.held(-receivedBytes);
    }
    receivedBytes = 0;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    releaseReceived();
    super.channelInactive(ctx);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseReceived();
  }
}
