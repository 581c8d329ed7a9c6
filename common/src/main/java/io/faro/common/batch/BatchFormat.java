package io.faro.common.batch;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.netty.buffer.ByteBuf;

/**
 * The layout of one batch: the unit a map task pushes, a worker appends as is, and a reducer
 * verifies and decodes. Big-endian.
 *
 * <pre>
 *   offset  size  field
 *   0       4     mapId       map index within the shuffle
 *   4       4     attemptId   attempt number of that map task
 *   8       4     batchId     0, 1, 2 ... within one map attempt
 *   12      4     rawLength   length of the data once decoded
 *   16      4     dataLength  length of the data as stored (after the codec)
 *   20      1     codec       {@link Codec}
 *   21      3     reserved    zero
 *   24      4     crc32c      CRC32C of bytes [0, 24) followed by the data
 *   28      d     data
 * </pre>
 *
 * <p>The data, once decoded, is a self-contained record stream: a reader decodes each batch on its
 * own. The reader keeps a batch only if its attempt won the map and its batchId was not seen
 * before: that filter is what makes retries and speculative tasks exactly-once.
 */
public final class BatchFormat {
  public static final int MAP_ID = 0;
  public static final int ATTEMPT_ID = 4;
  public static final int BATCH_ID = 8;
  public static final int RAW_LENGTH = 12;
  public static final int DATA_LENGTH = 16;
  public static final int CODEC = 20;
  public static final int CRC = 24;
  public static final int HEADER = 28;

  private BatchFormat() {}

  /** The stored data codec. Values are part of the format. */
  public enum Codec {
    NONE((byte) 0),
    LZ4((byte) 1),
    ZSTD((byte) 2);

    private final byte wire;

    Codec(byte wire) {
      this.wire = wire;
    }

    public byte wire() {
      return wire;
    }

    static Codec fromWire(byte b) {
      return switch (b) {
        case 0 -> NONE;
        case 1 -> LZ4;
        case 2 -> ZSTD;
        default -> null;
      };
    }
  }

  /** Upper bound of LZ4's expansion (output bytes per input byte): about 255. */
  static final long MAX_EXPANSION = 255;

  /**
   * Whether a batch of {@code dataLength} stored bytes may claim {@code rawLength} bytes once
   * decoded: at most what LZ4 can expand it to, whatever its codec. Readers refuse a batch that
   * claims more before they allocate for it (a CRC-valid batch from a buggy or hostile writer), and
   * encoders never write one (a ZSTD batch that shrank more is stored with LZ4).
   */
  public static boolean withinExpansion(long rawLength, long dataLength) {
    return rawLength <= MAX_EXPANSION * dataLength + 64;
  }

  /**
   * Checks that {@code buf[offset, offset + length)} is a whole number of well-formed batch headers
   * (lengths consistent, known codec) without reading the data. Used by the worker on every pushed
   * part: cheap, and it keeps a malformed part out of a partition file.
   *
   * @return the number of batches
   * @throws FaroException DATA_CORRUPTED naming what is wrong
   */
  public static int checkStructure(ByteBuf buf, int offset, int length) {
    int pos = offset;
    int end = offset + length;
    int count = 0;
    while (pos < end) {
      if (end - pos < HEADER) {
        throw corrupt("truncated batch header at byte " + (pos - offset) + " of " + length);
      }
      int dataLength = buf.getInt(pos + DATA_LENGTH);
      int rawLength = buf.getInt(pos + RAW_LENGTH);
      if (dataLength < 0 || rawLength < 0 || dataLength > end - pos - HEADER) {
        throw corrupt(
            "batch at byte "
                + (pos - offset)
                + " declares "
                + dataLength
                + " data bytes, "
                + (end - pos - HEADER)
                + " remain");
      }
      if (Codec.fromWire(buf.getByte(pos + CODEC)) == null) {
        throw corrupt(
            "batch at byte " + (pos - offset) + " has unknown codec " + buf.getByte(pos + CODEC));
      }
      pos += HEADER + dataLength;
      count++;
    }
    return count;
  }

  public static FaroException corrupt(String message) {
    return new FaroException(ErrorCode.DATA_CORRUPTED, message);
  }
}
