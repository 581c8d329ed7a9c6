package io.faro.common.network;

import com.google.protobuf.InvalidProtocolBufferException;
import io.faro.common.error.ErrorCode;
import io.faro.proto.MessageType;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;

/**
 * The failures and refusals {@link FrameDecoder} raises, with their messages: kept out of the
 * decoder so that its per-frame code stays short. Each is built only on the way to closing or
 * answering a connection, never for a good frame.
 */
final class FrameErrors {
  private FrameErrors() {}

  /** A length field below the fixed header or above {@code maxFrameLength}. */
  static DecoderException badLength(int length, int maxFrameLength) {
    if (length < FrameCodec.FIXED_AFTER_LENGTH) {
      return new CorruptedFrameException("frame length " + length + " is below the header size");
    }
    return new TooLongFrameException(
        "frame length "
            + length
            + " exceeds the maximum "
            + maxFrameLength
            + " (faro.network.max.frame.size)");
  }

  static CorruptedFrameException unknownKind(byte kind) {
    return new CorruptedFrameException("unknown frame kind " + kind);
  }

  static CorruptedFrameException unknownType(int typeNumber) {
    return new CorruptedFrameException("unknown message type " + typeNumber);
  }

  static CorruptedFrameException metaDoesNotFit(int metaLength, int length) {
    return new CorruptedFrameException(
        "meta length " + metaLength + " does not fit in frame length " + length);
  }

  static CorruptedFrameException unparsableMeta(
      MessageType type, InvalidProtocolBufferException e) {
    return new CorruptedFrameException("unparsable " + type + " meta: " + e.getMessage());
  }

  /** The answer to a frame of {@code type} whose meta {@link MetaShape} refused unparsed. */
  static FrameLimits.Refusal metaRefused(MessageType type, MetaShape.Refused e) {
    return new FrameLimits.Refusal(
        e.tooMany() ? ErrorCode.LIMIT_EXCEEDED : ErrorCode.INVALID_REQUEST,
        "refused a "
            + type
            + " before parsing it: "
            + e.getMessage()
            + (!e.tooMany()
                ? ""
                : type == MessageType.PUSH_REQUEST
                    ? " (a push holds at most one part per 28 bytes of its body and "
                        + "faro.network.max.parts.per.push)"
                    : " (faro.network.max.meta.objects)"));
  }
}
