package io.faro.common.batch;

import io.netty.buffer.ByteBuf;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Walks the batches of a fetched chunk: verifies each batch's CRC32C before anything else
 * (so a damaged length is never trusted), and decodes only the batches the caller keeps. Not
 * thread-safe: one per reader.
 */
public final class BatchDecoder {
  private final LZ4SafeDecompressor decompressor = LZ4Factory.fastestInstance().safeDecompressor();
  private final CRC32C crc = new CRC32C();
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
    int pos = chunk.readerIndex();
    int end = chunk.writerIndex();
    while (pos < end) {
      if (end - pos < BatchFormat.HEADER) {
        throw BatchFormat.corrupt("truncated batch header at offset " + pos + " in " + where);
      }
      int dataLength = chunk.getInt(pos + BatchFormat.DATA_LENGTH);
      if (dataLength < 0 || dataLength > end - pos - BatchFormat.HEADER) {
        throw BatchFormat.corrupt("batch at offset " + pos + " in " + where + " declares "
            + dataLength + " bytes but " + (end - pos - BatchFormat.HEADER) + " remain");
      }
      int expected = chunk.getInt(pos + BatchFormat.CRC);
      int actual = BatchEncoder.checksum(chunk, pos, dataLength, crc);
      int mapId = chunk.getInt(pos + BatchFormat.MAP_ID);
      int attemptId = chunk.getInt(pos + BatchFormat.ATTEMPT_ID);
      int batchId = chunk.getInt(pos + BatchFormat.BATCH_ID);
      if (expected != actual) {
        throw BatchFormat.corrupt(String.format(
            "CRC32C mismatch in batch (map %d, attempt %d, batch %d) at offset %d in %s: "
                + "stored %08x, computed %08x", mapId, attemptId, batchId, pos, where, expected, actual));
      }
      if (filter.keep(mapId, attemptId, batchId)) {
        int rawLength = chunk.getInt(pos + BatchFormat.RAW_LENGTH);
        byte[] data = decodeData(chunk, pos + BatchFormat.HEADER, dataLength, rawLength,
            chunk.getByte(pos + BatchFormat.CODEC), where);
        sink.accept(new Batch(mapId, attemptId, batchId, data, rawLength));
      }
      pos += BatchFormat.HEADER + dataLength;
    }
  }

  private byte[] decodeData(ByteBuf chunk, int start, int dataLength, int rawLength, byte codecByte, String where) {
    BatchFormat.Codec codec = BatchFormat.Codec.fromWire(codecByte);
    if (codec == null || rawLength < 0) {
      throw BatchFormat.corrupt("bad codec " + codecByte + " or raw length " + rawLength + " in " + where);
    }
    if (scratch.length < rawLength) {
      scratch = new byte[Math.max(rawLength, scratch.length * 2)];
    }
    if (codec == BatchFormat.Codec.NONE) {
      if (dataLength != rawLength) {
        throw BatchFormat.corrupt("uncompressed batch with " + dataLength + " != " + rawLength + " in " + where);
      }
      chunk.getBytes(start, scratch, 0, rawLength);
      return scratch;
    }
    int n;
    if (chunk.hasArray()) {
      n = decompressor.decompress(chunk.array(), chunk.arrayOffset() + start, dataLength, scratch, 0, rawLength);
    } else {
      if (compressed.length < dataLength) {
        compressed = new byte[Math.max(dataLength, compressed.length * 2)];
      }
      chunk.getBytes(start, compressed, 0, dataLength);
      n = decompressor.decompress(compressed, 0, dataLength, scratch, 0, rawLength);
    }
    if (n != rawLength) {
      throw BatchFormat.corrupt("batch decompressed to " + n + " bytes, header says " + rawLength + " in " + where);
    }
    return scratch;
  }
}
