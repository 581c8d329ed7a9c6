package io.faro.worker.storage;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The layout of a committed partition file, version {@value #VERSION}. All integers are big-endian.
 *
 * <pre>
 *   [chunk 0][chunk 1]...[chunk n-1]   the pushed parts, as received, in append order
 *   [index]                            n + 1 longs: the start offset of every chunk, then the
 *                                      data length (= the offset of the index); then (version 2)
 *                                      n pairs of ints: each chunk's first and last map index
 *   [trailer, {@value #TRAILER_SIZE} bytes]
 *     offset  size  field
 *     0       8     indexOffset        where the index starts
 *     8       4     chunkCount         n
 *     12      4     indexCrc           CRC32C of the index bytes
 *     16      4     version            {@value #VERSION} (1: the index has no map ranges)
 *     20      4     magic              0x4641524F, "FARO"
 * </pre>
 *
 * <p>The trailer sits at the end so that the file can be written in one sequential pass while the
 * data arrives, and read back (after a restart) from its last bytes. A reader checks the magic
 * first, then the version, then that the index fits exactly between data and trailer and matches
 * its CRC. Each chunk is made of whole pushed parts, each part of whole batches ({@link
 * io.faro.common.batch.BatchFormat}), so every chunk is decodable on its own. Version 1 files
 * (written before chunks knew their maps) are still read: their chunks' map ranges are unknown.
 *
 * <p>An empty partition has no file at all.
 */
public final class PartitionFileFormat {
  public static final int MAGIC = 0x4641524F;
  public static final int VERSION = 2;

  /** The first version, whose index has no map ranges; still read. */
  public static final int VERSION_WITHOUT_MAP_RANGES = 1;

  /** Bytes of one index entry. */
  public static final int INDEX_ENTRY = Long.BYTES;

  public static final int TRAILER_INDEX_OFFSET = 0;
  public static final int TRAILER_CHUNK_COUNT = 8;
  public static final int TRAILER_INDEX_CRC = 12;
  public static final int TRAILER_VERSION = 16;
  public static final int TRAILER_MAGIC = 20;
  public static final int TRAILER_SIZE = 24;

  private PartitionFileFormat() {}

  /** Bytes of one chunk's map range in the index (version 2). */
  public static final int MAP_RANGE_ENTRY = 2 * Integer.BYTES;

  /** Bytes of the index of a file of {@code version} with {@code chunkCount} chunks. */
  public static long indexLength(int chunkCount, int version) {
    long offsets = ((long) chunkCount + 1) * INDEX_ENTRY;
    return version == VERSION_WITHOUT_MAP_RANGES
        ? offsets
        : offsets + (long) chunkCount * MAP_RANGE_ENTRY;
  }

  /** The index followed by the trailer, ready to append after the data; position 0. */
  public static ByteBuffer encodeFooter(ChunkIndex chunks) {
    int chunkCount = chunks.chunkCount();
    // A writer always knows its chunks' maps; an index without them (read from a version 1 file)
    // is written as version 1 again.
    int version = chunks.hasMapRanges() ? VERSION : VERSION_WITHOUT_MAP_RANGES;
    int indexLength = (int) indexLength(chunkCount, version);
    ByteBuffer footer = ByteBuffer.allocate(indexLength + TRAILER_SIZE).order(ByteOrder.BIG_ENDIAN);
    for (int i = 0; i <= chunkCount; i++) {
      footer.putLong(chunks.offset(i));
    }
    if (chunks.hasMapRanges()) {
      for (int i = 0; i < chunkCount; i++) {
        footer.putInt(chunks.firstMap(i)).putInt(chunks.lastMap(i));
      }
    }
    int indexCrc = crc(footer, 0, indexLength);
    footer.putLong(chunks.dataLength());
    footer.putInt(chunkCount);
    footer.putInt(indexCrc);
    footer.putInt(version);
    footer.putInt(MAGIC);
    return footer.flip();
  }

  /** CRC32C of {@code buffer[offset, offset + length)}; does not move the buffer's position. */
  static int crc(ByteBuffer buffer, int offset, int length) {
    CRC32C crc = new CRC32C();
    crc.update(buffer.duplicate().position(offset).limit(offset + length));
    return (int) crc.getValue();
  }
}
