package io.faro.worker.fetch;

import io.faro.common.batch.BatchEncoder;
import io.faro.common.batch.BatchFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Cuts a chunk down to the batches of some maps, for a sub-read of a skewed partition: the engine
 * splits such a partition into reads of map ranges, and the chunks of maps that ran at the same
 * time hold batches of several ranges. Sending each sub-read only its maps' batches makes the
 * sub-reads of a partition fetch its bytes once between them, instead of once per sub-read that
 * shares a chunk.
 *
 * <p>Nothing is left out unless it certainly belongs to another map: a batch is left out only if
 * its header is whole, its data lies within the chunk and its CRC32C (over the header and the data)
 * matches; a batch whose map id was damaged on disk would otherwise vanish from every sub-read
 * instead of failing the one that owns it. When the chunk cannot be walked to its end (a length
 * that runs past it), it is sent whole, and the reader's own checks name the damage.
 */
final class MapRangeCut {
  private MapRangeCut() {}

  /**
   * The batches of maps {@code [startMap, endMap)} of {@code chunk}, in order: {@code chunk} itself
   * when they are all of it (or it cannot be walked), else a buffer of slices of it (possibly
   * empty). Takes ownership of {@code chunk}: the caller releases only the result.
   */
  static ByteBuf keep(ByteBuf chunk, int startMap, int endMap) {
    int pos = chunk.readerIndex();
    int end = chunk.writerIndex();
    // Runs of kept bytes, as [from, to) pairs.
    List<int[]> runs = new ArrayList<>();
    CRC32C crc = new CRC32C();
    boolean leftOut = false;
    while (pos < end) {
      if (end - pos < BatchFormat.HEADER) {
        return chunk; // a torn header: the reader names it
      }
      int dataLength = chunk.getInt(pos + BatchFormat.DATA_LENGTH);
      if (dataLength < 0 || dataLength > end - pos - BatchFormat.HEADER) {
        return chunk; // runs past the chunk: the reader names it
      }
      int next = pos + BatchFormat.HEADER + dataLength;
      int mapId = chunk.getInt(pos + BatchFormat.MAP_ID);
      boolean wanted = mapId >= startMap && mapId < endMap;
      if (wanted || !intact(chunk, pos, dataLength, crc)) {
        if (!runs.isEmpty() && runs.get(runs.size() - 1)[1] == pos) {
          runs.get(runs.size() - 1)[1] = next;
        } else {
          runs.add(new int[] {pos, next});
        }
      } else {
        leftOut = true;
      }
      pos = next;
    }
    if (!leftOut) {
      return chunk;
    }
    ByteBuf[] slices = new ByteBuf[runs.size()];
    for (int i = 0; i < slices.length; i++) {
      int[] run = runs.get(i);
      slices[i] = chunk.retainedSlice(run[0], run[1] - run[0]);
    }
    chunk.release();
    return slices.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(slices);
  }

  /** Whether the batch at {@code pos} matches its CRC32C (see {@link BatchFormat}). */
  private static boolean intact(ByteBuf chunk, int pos, int dataLength, CRC32C crc) {
    return BatchEncoder.checksum(chunk, pos, dataLength, crc)
        == chunk.getInt(pos + BatchFormat.CRC);
  }
}
