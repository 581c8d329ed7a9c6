package io.faro.common.network;

import com.google.protobuf.CodedOutputStream;
import io.faro.proto.MessageType;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.io.IOException;
import java.util.List;

/**
 * Writes an {@link OutboundFrame} as a header buffer followed by its body buffer, passed on as is.
 * Stateless and sharable. The superclass releases the frame after {@link #encode}, also when
 * encoding throws.
 */
@ChannelHandler.Sharable
public final class FrameEncoder extends MessageToMessageEncoder<OutboundFrame> {
  public static final FrameEncoder INSTANCE = new FrameEncoder();

  private FrameEncoder() {}

  @Override
  protected void encode(ChannelHandlerContext ctx, OutboundFrame frame, List<Object> out)
      throws IOException {
    int metaLength = frame.meta().getSerializedSize();
    long frameLength = FrameCodec.FIXED_AFTER_LENGTH + (long) metaLength + frame.bodyLength();
    if (frameLength > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("frame too long: " + frameLength);
    }
    MessageType type = MessageCodecs.typeOf(frame.meta());
    ByteBuf header = ctx.alloc().directBuffer(FrameCodec.HEADER + metaLength);
    try {
      header.writeInt((int) frameLength);
      header.writeByte(frame.kind().wire());
      header.writeShort(type.getNumber());
      header.writeLong(frame.requestId());
      header.writeInt(metaLength);
      CodedOutputStream cos =
          CodedOutputStream.newInstance(header.nioBuffer(header.writerIndex(), metaLength));
      frame.meta().writeTo(cos);
      cos.checkNoSpaceLeft();
      header.writerIndex(header.writerIndex() + metaLength);
    } catch (IOException | RuntimeException e) {
      header.release();
      throw e;
    }
    out.add(header);
    if (frame.body() != null) {
      // The encoder releases the frame after this method; the body travels on with its own count.
      out.add(frame.body().retain());
    }
  }
}
