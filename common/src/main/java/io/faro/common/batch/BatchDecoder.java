package io.faro.common.batch;

import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Walks the batches of a fetched chunk: verifies each batch's CRC32C before anything else (so a
 * damaged length is never trusted), and decodes only the batches the caller keeps, whatever codec
 * each was written with. Not thread-safe: one per reader, closed by it (decoding a ZSTD batch takes
 * a native context, kept until then).
 */
public final class BatchDecoder implements AutoCloseable {
  private final LZ4SafeDecompressor decompressor = LZ4Factory.fastestInstance().safeDecompressor();
  private final CRC32C crc = new CRC32C();
  // Made at the first ZSTD batch.
  private ZstdDecompressCtx zstd;
  private volatile boolean closeRequested;

  private byte[] scratch = new byte[64 * 1024];
  private byte[] compressed = new byte[0];

  /** Decides whether a batch counts, from its header only. */
  @FunctionalInterface
  public interface Filter {
    boolean keep(int mapId, int attemptId, int batchId);
  }

  /** Receives a kept batch; its array is valid only during the call. */
  @FunctionalInterface
  public interface Sink {
    void accept(Batch batch);
  }

  /**
   * Reads every batch in {@code chunk}'s readable bytes, borrowing the buffer.
   *
   * @param where names the chunk in error messages (partition, epoch, chunk index, worker)
   * @throws io.faro.common.error.FaroException DATA_CORRUPTED on any checksum or structure error
   */
  public void decode(ByteBuf chunk, String where, Filter filter, Sink sink) {
    Cursor cursor = cursor(chunk, where);
    Batch batch;
    while ((batch = cursor.next(filter)) != null) {
      sink.accept(batch);
    }
  }

  /** A cursor over the batches of {@code chunk}, which it borrows. */
  public Cursor cursor(ByteBuf chunk, String where) {
    return new Cursor(chunk, where);
  }

  /** Steps through one chunk's batches; each returned batch is valid until the next call. */
  public final class Cursor {
    private final ByteBuf chunk;
    private final String where;
    private int pos;

    private Cursor(ByteBuf chunk, String where) {
      this.chunk = chunk;
      this.where = where;
      this.pos = chunk.readerIndex();
    }

    /** The next batch that passes {@code filter}, or null at the end of the chunk. */
    public Batch next(Filter filter) {
      int end = chunk.writerIndex();
      while (pos < end) {
        int start = pos;
        if (end - start < BatchFormat.HEADER) {
          throw BatchFormat.corrupt("truncated batch header at offset " + start + " in " + where);
        }
        int dataLength = chunk.getInt(start + BatchFormat.DATA_LENGTH);
        if (dataLength < 0 || dataLength > end - start - BatchFormat.HEADER) {
          throw BatchFormat.corrupt(
              "batch at offset "
                  + start
                  + " in "
                  + where
                  + " declares "
                  + dataLength
                  + " bytes but "
                  + (end - start - BatchFormat.HEADER)
                  + " remain");
        }
        int expected = chunk.getInt(start + BatchFormat.CRC);
        int actual = BatchEncoder.checksum(chunk, start, dataLength, crc);
        int mapId = chunk.getInt(start + BatchFormat.MAP_ID);
        int attemptId = chunk.getInt(start + BatchFormat.ATTEMPT_ID);
        int batchId = chunk.getInt(start + BatchFormat.BATCH_ID);
        if (expected != actual) {
          throw BatchFormat.corrupt(
              String.format(
                  "CRC32C mismatch in batch (map %d, attempt %d, batch %d) at offset %d in %s: "
                      + "stored %08x, computed %08x",
                  mapId, attemptId, batchId, start, where, expected, actual));
        }
        pos = start + BatchFormat.HEADER + dataLength;
        if (filter.keep(mapId, attemptId, batchId)) {
          int rawLength = chunk.getInt(start + BatchFormat.RAW_LENGTH);
          byte[] data =
              decodeData(
                  chunk,
                  start + BatchFormat.HEADER,
                  dataLength,
                  rawLength,
                  chunk.getByte(start + BatchFormat.CODEC),
                  where);
          return new Batch(mapId, attemptId, batchId, data, rawLength);
        }
      }
      return null;
    }
  }

  private byte[] decodeData(
      ByteBuf chunk, int start, int dataLength, int rawLength, byte codecByte, String where) {
    BatchFormat.Codec codec = BatchFormat.Codec.fromWire(codecByte);
    if (codec == null || rawLength < 0) {
      throw BatchFormat.corrupt(
          "bad codec " + codecByte + " or raw length " + rawLength + " in " + where);
    }
    // Checked before the scratch array grows to it: no encoder writes a batch that expands more
    // than LZ4 can (about 255 times), so a header claiming more (a CRC-valid batch from a buggy or
    // hostile writer) is corrupt.
    if (!BatchFormat.withinExpansion(rawLength, dataLength)) {
      throw BatchFormat.corrupt(
          "batch of "
              + dataLength
              + " bytes claims "
              + rawLength
              + " bytes uncompressed, more than any codec expands it, in "
              + where);
    }
    if (scratch.length < rawLength) {
      scratch = new byte[Math.max(rawLength, scratch.length * 2)];
    }
    if (codec == BatchFormat.Codec.NONE) {
      if (dataLength != rawLength) {
        throw BatchFormat.corrupt(
            "uncompressed batch with " + dataLength + " != " + rawLength + " in " + where);
      }
      chunk.getBytes(start, scratch, 0, rawLength);
      return scratch;
    }
    int n;
    if (codec == BatchFormat.Codec.ZSTD) {
      n = decodeZstd(chunk, start, dataLength, rawLength, where);
    } else if (chunk.hasArray()) {
      n =
          decompressor.decompress(
              chunk.array(), chunk.arrayOffset() + start, dataLength, scratch, 0, rawLength);
    } else if (chunk.nioBufferCount() == 1) {
      // Straight from the direct buffer: no copy of the compressed bytes.
      n =
          decompressor.decompress(
              chunk.nioBuffer(start, dataLength),
              0,
              dataLength,
              ByteBuffer.wrap(scratch),
              0,
              rawLength);
    } else {
      if (compressed.length < dataLength) {
        compressed = new byte[Math.max(dataLength, compressed.length * 2)];
      }
      chunk.getBytes(start, compressed, 0, dataLength);
      n = decompressor.decompress(compressed, 0, dataLength, scratch, 0, rawLength);
    }
    if (n != rawLength) {
      throw BatchFormat.corrupt(
          "batch decompressed to " + n + " bytes, header says " + rawLength + " in " + where);
    }
    return scratch;
  }

  private int decodeZstd(ByteBuf chunk, int start, int dataLength, int rawLength, String where) {
    if (zstd == null) {
      if (closeRequested) {
        throw new IllegalStateException("this batch decoder was closed");
      }
      zstd = new ZstdDecompressCtx();
    }
    byte[] source;
    int offset;
    if (chunk.hasArray()) {
      source = chunk.array();
      offset = chunk.arrayOffset() + start;
    } else {
      if (compressed.length < dataLength) {
        compressed = new byte[Math.max(dataLength, compressed.length * 2)];
      }
      chunk.getBytes(start, compressed, 0, dataLength);
      source = compressed;
      offset = 0;
    }
    try {
      return zstd.decompressByteArray(scratch, 0, rawLength, source, offset, dataLength);
    } catch (ZstdException e) {
      // ZSTD's own checks: a damaged frame, or one that decodes to more than the header says.
      throw BatchFormat.corrupt("ZSTD batch does not decode (" + e.getMessage() + ") in " + where);
    } finally {
      if (closeRequested) {
        freeZstd();
      }
    }
  }

  /**
   * Frees the ZSTD context, if any. Idempotent, and never throws: zstd-jni refuses to free a
   * context in use, so a close while another thread decodes (a task's cleanup) leaves it to that
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
}
