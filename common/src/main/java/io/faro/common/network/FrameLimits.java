package io.faro.common.network;

import io.faro.common.error.ErrorCode;
import io.faro.proto.MessageType;

/**
 * What one connection may send, asked by its {@link FrameDecoder} as soon as a frame's 19-byte
 * header has arrived: before the rest of the frame is buffered and before its meta is parsed. A
 * server's limits depend on whether the connection proved who it is ({@link ServerFrameLimits}); a
 * client takes what the server it dialled sends, up to its frame size ({@link #NONE}).
 *
 * <p>Called on the connection's event loop.
 */
interface FrameLimits {
  /** Only the decoder's own frame-length bound. */
  FrameLimits NONE =
      new FrameLimits() {
        @Override
        public Refusal refusal(MessageType type, int frameLength, int metaLength) {
          return null;
        }

        @Override
        public int maxObjects(MessageType type, int bodyLength) {
          return Integer.MAX_VALUE;
        }

        @Override
        public boolean proven() {
          return true;
        }
      };

  /**
   * Why a frame of this header may not come on this connection now, or null when it may. A refused
   * frame is answered with the refusal and its connection closed, nothing of it buffered or parsed.
   *
   * @param frameLength the frame's bytes after its length field
   */
  Refusal refusal(MessageType type, int frameLength, int metaLength);

  /**
   * The most objects (embedded messages, strings, unknown fields: {@link MetaShape}) the meta of
   * {@code type} may hold, checked before it is parsed.
   */
  int maxObjects(MessageType type, int bodyLength);

  /**
   * Whether the connection proved who it is (or its server asks no proof): only then are the bytes
   * of its frames still arriving charged to a memory budget ({@link FrameDecoder.PartialFrames}),
   * and only then may it send large frames.
   */
  boolean proven();

  /** A frame refused on its header: the answer's code and message, naming the limit's key. */
  record Refusal(ErrorCode code, String message) {}
}
