package io.faro.common.network;

/**
 * The frame layout, shared by encoder and decoder. All integers are big-endian.
 *
 * <pre>
 *   offset  size  field
 *   0       4     frameLength   bytes after this field: 15 + metaLength + bodyLength
 *   4       1     kind          {@link FrameKind}: 1 request, 2 response, 3 error
 *   5       2     messageType   {@link io.faro.proto.MessageType} number of the meta message
 *   7       8     requestId     chosen by the requester, echoed in the response
 *   15      4     metaLength    length of the protobuf meta message
 *   19      m     meta          protobuf bytes
 *   19+m    b     body          raw bytes (pushed batches, a fetched chunk), never protobuf
 * </pre>
 *
 * <p>The decoder checks {@code frameLength} against the configured maximum before it waits for or
 * buffers the frame, so an oversized or garbage length costs nothing but the connection.
 */
public final class FrameCodec {
  /** Bytes of the length field. */
  public static final int LENGTH_FIELD = 4;

  /** Bytes after the length field and before the meta message. */
  public static final int FIXED_AFTER_LENGTH = 1 + 2 + 8 + 4;

  /** Bytes of the whole fixed header. */
  public static final int HEADER = LENGTH_FIELD + FIXED_AFTER_LENGTH;

  private FrameCodec() {}
}
