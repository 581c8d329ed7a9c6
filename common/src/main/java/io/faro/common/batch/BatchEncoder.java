package io.faro.common.batch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;

/**
 * Encodes record bytes into one batch ({@link BatchFormat}): compresses with LZ4 unless that does
 * not shrink the data, then checksums header and data with CRC32C. Not thread-safe: one per map
 * task.
 */
public final class BatchEncoder {
  private final boolean compress;
  private final LZ4Compressor compressor;
  private final ByteBufAllocator allocator;
  private final CRC32C crc = new CRC32C();

  public BatchEncoder(boolean compress, ByteBufAllocator allocator) {
    this.compress = compress;
    this.compressor = compress ? LZ4Factory.fastestInstance().fastCompressor() : null;
    this.allocator = allocator;
  }

  /** Encodes {@code raw[offset, offset + length)}. Returns a new buffer owned by the caller. */
  public ByteBuf encode(int mapId, int attemptId, int batchId, byte[] raw, int offset, int length) {
    int capacity =
        BatchFormat.HEADER + (compress ? compressor.maxCompressedLength(length) : length);
    ByteBuf out = allocator.directBuffer(capacity);
    try {
      int dataLength;
      BatchFormat.Codec codec;
      if (compress) {
        ByteBuffer dest = out.nioBuffer(BatchFormat.HEADER, capacity - BatchFormat.HEADER);
        int compressed =
            compressor.compress(ByteBuffer.wrap(raw), offset, length, dest, 0, dest.remaining());
        if (compressed < length) {
          dataLength = compressed;
          codec = BatchFormat.Codec.LZ4;
        } else {
          out.setBytes(BatchFormat.HEADER, raw, offset, length);
          dataLength = length;
          codec = BatchFormat.Codec.NONE;
        }
      } else {
        out.setBytes(BatchFormat.HEADER, raw, offset, length);
        dataLength = length;
        codec = BatchFormat.Codec.NONE;
      }
      out.setInt(BatchFormat.MAP_ID, mapId);
      out.setInt(BatchFormat.ATTEMPT_ID, attemptId);
      out.setInt(BatchFormat.BATCH_ID, batchId);
      out.setInt(BatchFormat.RAW_LENGTH, length);
      out.setInt(BatchFormat.DATA_LENGTH, dataLength);
      out.setByte(BatchFormat.CODEC, codec.wire());
      out.setMedium(BatchFormat.CODEC + 1, 0);
      out.writerIndex(BatchFormat.HEADER + dataLength);
      out.setInt(BatchFormat.CRC, checksum(out, 0, dataLength, crc));
      return out;
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
  }

  /**
   * CRC32C of the 24 header bytes before the crc field and the data of the batch at {@code pos}.
   */
  static int checksum(ByteBuf buf, int pos, int dataLength, CRC32C crc) {
    crc.reset();
    crc.update(buf.nioBuffer(pos, BatchFormat.CRC));
    crc.update(buf.nioBuffer(pos + BatchFormat.HEADER, dataLength));
    return (int) crc.getValue();
  }
}
