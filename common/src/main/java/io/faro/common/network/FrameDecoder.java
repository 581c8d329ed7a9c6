package io.faro.common.network;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.faro.proto.MessageType;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import java.util.List;

/**
 * Splits the byte stream into {@link Frame}s (layout: {@link FrameCodec}). A frame that is too
 * long, truncated at the end of its declared length, or carries an unknown kind, an unknown
 * message type or unparsable meta raises {@link CorruptedFrameException} (or {@link
 * TooLongFrameException}); {@link TransportChannelHandler} then logs the reason and closes this
 * connection only. After a failure every further byte is discarded.
 *
 * <p>The frame body is a retained slice of the received bytes: no copy.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  private final int maxFrameLength;
  private boolean failed;

  public FrameDecoder(int maxFrameLength) {
    if (maxFrameLength <= FrameCodec.FIXED_AFTER_LENGTH) {
      throw new IllegalArgumentException("maxFrameLength too small: " + maxFrameLength);
    }
    this.maxFrameLength = maxFrameLength;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    while (in.readableBytes() >= FrameCodec.LENGTH_FIELD) {
      int start = in.readerIndex();
      int length = in.getInt(start);
      if (length < FrameCodec.FIXED_AFTER_LENGTH) {
        fail(in, new CorruptedFrameException("frame length " + length + " is below the header size"));
      }
      if (length > maxFrameLength) {
        fail(in, new TooLongFrameException(
            "frame length " + length + " exceeds the maximum " + maxFrameLength
                + " (faro.network.max.frame.size)"));
      }
      if (in.readableBytes() < FrameCodec.LENGTH_FIELD + length) {
        return;
      }
      out.add(decodeFrame(in, start, length));
      in.readerIndex(start + FrameCodec.LENGTH_FIELD + length);
    }
  }

  private Frame decodeFrame(ByteBuf in, int start, int length) {
    int pos = start + FrameCodec.LENGTH_FIELD;
    FrameKind kind = FrameKind.fromWire(in.getByte(pos));
    if (kind == null) {
      fail(in, new CorruptedFrameException("unknown frame kind " + in.getByte(pos)));
    }
    int typeNumber = in.getShort(pos + 1);
    MessageType type = MessageType.forNumber(typeNumber);
    Parser<? extends Message> parser = type == null ? null : MessageCodecs.parser(type);
    if (parser == null) {
      fail(in, new CorruptedFrameException("unknown message type " + typeNumber));
    }
    long requestId = in.getLong(pos + 3);
    int metaLength = in.getInt(pos + 11);
    int bodyLength = length - FrameCodec.FIXED_AFTER_LENGTH - metaLength;
    if (metaLength < 0 || bodyLength < 0) {
      fail(in, new CorruptedFrameException(
          "meta length " + metaLength + " does not fit in frame length " + length));
    }
    int metaStart = start + FrameCodec.HEADER;
    Message meta;
    try {
      meta = parser.parseFrom(in.nioBuffer(metaStart, metaLength));
    } catch (InvalidProtocolBufferException e) {
      fail(in, new CorruptedFrameException("unparsable " + type + " meta: " + e.getMessage()));
      throw new AssertionError(); // unreachable: fail throws
    }
    ByteBuf body = in.retainedSlice(metaStart + metaLength, bodyLength);
    return new Frame(kind, type, requestId, meta, body);
  }

  private void fail(ByteBuf in, RuntimeException reason) {
    failed = true;
    in.skipBytes(in.readableBytes());
    throw reason;
  }
}
