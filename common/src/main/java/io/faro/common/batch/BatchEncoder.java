package io.faro.common.batch;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;

/**
 * Encodes record bytes into one batch ({@link BatchFormat}): compresses with its codec (LZ4, ZSTD
 * or none) unless that does not shrink the data, then checksums header and data with CRC32C. Not
 * thread-safe: one per map task, closed by it (a ZSTD encoder holds a native context).
 */
public final class BatchEncoder implements AutoCloseable {
  /** The ZSTD level Faro uses unless told otherwise: ZSTD's fastest. */
  public static final int DEFAULT_ZSTD_LEVEL = 1;

  /** ZSTD output buffers larger than this are dropped after their batch. */
  private static final int KEPT_ZSTD_BUFFER = 4 << 20;

  private final BatchFormat.Codec codec;
  // Also the ZSTD encoder's: a batch ZSTD shrinks beyond what readers accept is stored with LZ4.
  private final LZ4Compressor lz4;
  private final ZstdCompressCtx zstd;
  private final ByteBufAllocator allocator;
  private final CRC32C crc = new CRC32C();
  // ZSTD compresses from and to arrays here; the result is copied into the batch's buffer.
  private byte[] zstdOut = new byte[0];
  private volatile boolean closeRequested;

  /** An encoder with LZ4 ({@code compress}) or no compression. */
  public BatchEncoder(boolean compress, ByteBufAllocator allocator) {
    this(compress ? BatchFormat.Codec.LZ4 : BatchFormat.Codec.NONE, DEFAULT_ZSTD_LEVEL, allocator);
  }

  /**
   * @param zstdLevel ZSTD's level (used with {@link BatchFormat.Codec#ZSTD} only)
   */
  public BatchEncoder(BatchFormat.Codec codec, int zstdLevel, ByteBufAllocator allocator) {
    this.codec = codec;
    this.lz4 =
        codec == BatchFormat.Codec.NONE ? null : LZ4Factory.fastestInstance().fastCompressor();
    this.zstd = codec == BatchFormat.Codec.ZSTD ? new ZstdCompressCtx().setLevel(zstdLevel) : null;
    this.allocator = allocator;
  }

  /** Encodes {@code raw[offset, offset + length)}. Returns a new buffer owned by the caller. */
  public ByteBuf encode(int mapId, int attemptId, int batchId, byte[] raw, int offset, int length) {
    int capacity =
        BatchFormat.HEADER
            + (codec == BatchFormat.Codec.NONE ? length : lz4.maxCompressedLength(length));
    ByteBuf out = allocator.directBuffer(capacity);
    try {
      int stored = -1; // compressed length, or -1: stored as is
      BatchFormat.Codec used = codec;
      if (codec == BatchFormat.Codec.ZSTD) {
        int bound = (int) Math.min(Integer.MAX_VALUE - 16, Zstd.compressBound(length));
        if (zstdOut.length < bound) {
          zstdOut = new byte[bound];
        }
        try {
          stored = zstd.compressByteArray(zstdOut, 0, zstdOut.length, raw, offset, length);
        } finally {
          if (closeRequested) {
            freeZstd();
          }
        }
        if (stored < length && BatchFormat.withinExpansion(length, stored)) {
          out.setBytes(BatchFormat.HEADER, zstdOut, 0, stored);
        } else if (stored < length) {
          // Shrunk more than readers let any batch claim (they check before they allocate):
          // stored with LZ4 instead, which never shrinks that much.
          used = BatchFormat.Codec.LZ4;
        }
        if (zstdOut.length > KEPT_ZSTD_BUFFER) {
          zstdOut = new byte[0]; // a giant record's buffer is not kept for the rest of the task
        }
      }
      if (used == BatchFormat.Codec.LZ4) {
        ByteBuffer dest = out.nioBuffer(BatchFormat.HEADER, capacity - BatchFormat.HEADER);
        stored = lz4.compress(ByteBuffer.wrap(raw), offset, length, dest, 0, dest.remaining());
      }
      int dataLength;
      if (stored >= 0 && stored < length) {
        dataLength = stored;
      } else {
        out.setBytes(BatchFormat.HEADER, raw, offset, length);
        used = BatchFormat.Codec.NONE;
        dataLength = length;
      }
      out.setInt(BatchFormat.MAP_ID, mapId);
      out.setInt(BatchFormat.ATTEMPT_ID, attemptId);
      out.setInt(BatchFormat.BATCH_ID, batchId);
      out.setInt(BatchFormat.RAW_LENGTH, length);
      out.setInt(BatchFormat.DATA_LENGTH, dataLength);
      out.setByte(BatchFormat.CODEC, used.wire());
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
   * Frees the ZSTD context, if any. Idempotent, and never throws: zstd-jni refuses to free a
   * context in use, so a close while another thread encodes (a task's cleanup) leaves it to that
   * thread, which frees it when its call ends.
   */
  @Override
  public void close() {
    closeRequested = true;
    freeZstd();
  }

  private void freeZstd() {
    if (zstd != null) {
      try {
        zstd.close();
      } catch (IllegalStateException inUse) {
        // In use: closeRequested makes the thread using it free it when it is done.
      }
    }
  }

  /**
   * CRC32C of the 24 header bytes before the crc field and the data of the batch at {@code pos}
   * (what its crc field must hold). Reads a composite buffer (a chunk read into several segments)
   * piece by piece, without copying it.
   */
  public static int checksum(ByteBuf buf, int pos, int dataLength, CRC32C crc) {
    crc.reset();
    for (ByteBuffer piece : buf.nioBuffers(pos, BatchFormat.CRC)) {
      crc.update(piece);
    }
    for (ByteBuffer piece : buf.nioBuffers(pos + BatchFormat.HEADER, dataLength)) {
      crc.update(piece);
    }
    return (int) crc.getValue();
  }
}
