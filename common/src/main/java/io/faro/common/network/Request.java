package io.faro.common.network;

import com.google.protobuf.Message;
import io.faro.proto.MessageType;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * An inbound request handed to a {@link RequestHandler}. The body is borrowed: the server releases
 * it when {@code handle} returns, so a handler that keeps bytes retains them.
 */
public record Request(
    Channel channel, MessageType type, long requestId, Message meta, ByteBuf body) {
  @SuppressWarnings("unchecked")
  public <M extends Message> M meta(Class<M> expected) {
    if (!expected.isInstance(meta)) {
      throw new IllegalStateException("expected " + expected.getSimpleName() + ", got " + type);
    }
    return (M) meta;
  }
}
