package io.faro.worker.storage;

import static io.faro.worker.storage.PartitionFileFormat.INDEX_ENTRY;
import static io.faro.worker.storage.PartitionFileFormat.TRAILER_SIZE;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Opens a committed partition file ({@link PartitionFileFormat}) and reads its chunk index,
 * verifying the trailer and the index checksum. Used when a commit completes (to serve exactly what
 * the file says) and by tests; a later restart path reads files back with it.
 */
public final class PartitionFileReader {
  private PartitionFileReader() {}

  /**
   * A whole partition file of a format version newer than this worker reads: written by a newer
   * Faro. Never corrupt, never to be deleted: a worker that finds one does not start (see {@link
   * io.faro.worker.meta.StartupRecovery}).
   */
  public static final class NewerFormatException extends FaroException {
    private static final long serialVersionUID = 1L;

    NewerFormatException(Path file, int version) {
      super(
          ErrorCode.STORAGE_FAILED,
          "partition file "
              + file
              + " has format version "
              + version
              + ", newer than this Faro reads ("
              + PartitionFileFormat.VERSION
              + "): a newer Faro wrote it. Start that version again, or move the file away to"
              + " start this worker without it");
    }
  }

  /**
   * Reads the chunk index of {@code file}.
   *
   * @throws NewerFormatException when a newer Faro wrote it
   * @throws FaroException DATA_CORRUPTED when the file is not a valid partition file (bad magic,
   *     unknown version, index that does not fit or fails its CRC), STORAGE_FAILED when it cannot
   *     be read; both name the file
   */
  public static ChunkIndex readIndex(Path file) {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      if (size < TRAILER_SIZE) {
        throw corrupt(
            file, "is " + size + " bytes, shorter than the " + TRAILER_SIZE + "-byte trailer");
      }
      ByteBuffer trailer = readFully(channel, size - TRAILER_SIZE, TRAILER_SIZE);
      Trailer t = Trailer.decode(file, trailer);
      if (t.chunkCount() < 0
          || t.indexOffset() < 0
          || t.indexOffset()
              != size
                  - TRAILER_SIZE
                  - PartitionFileFormat.indexLength(t.chunkCount(), t.version())) {
        throw corrupt(
            file,
            "trailer declares "
                + t.chunkCount()
                + " chunks with the index at "
                + t.indexOffset()
                + ", which does not fit a file of "
                + size
                + " bytes");
      }
      int indexLength = (int) PartitionFileFormat.indexLength(t.chunkCount(), t.version());
      ByteBuffer index = readFully(channel, t.indexOffset(), indexLength);
      int crc = PartitionFileFormat.crc(index, 0, indexLength);
      if (crc != t.indexCrc()) {
        throw corrupt(
            file,
            String.format("index CRC32C mismatch: stored %08x, computed %08x", t.indexCrc(), crc));
      }
      long[] offsets = new long[t.chunkCount() + 1];
      for (int i = 0; i < offsets.length; i++) {
        offsets[i] = index.getLong(i * INDEX_ENTRY);
      }
      if (offsets[offsets.length - 1] != t.indexOffset()) {
        throw corrupt(
            file,
            "index ends at "
                + offsets[offsets.length - 1]
                + " but the data ends at "
                + t.indexOffset());
      }
      try {
        if (t.version() == PartitionFileFormat.VERSION_WITHOUT_MAP_RANGES) {
          return ChunkIndex.of(offsets);
        }
        int[] firstMaps = new int[t.chunkCount()];
        int[] lastMaps = new int[t.chunkCount()];
        int ranges = offsets.length * INDEX_ENTRY;
        for (int i = 0; i < firstMaps.length; i++) {
          firstMaps[i] = index.getInt(ranges + i * PartitionFileFormat.MAP_RANGE_ENTRY);
          lastMaps[i] = index.getInt(ranges + i * PartitionFileFormat.MAP_RANGE_ENTRY + 4);
        }
        return ChunkIndex.of(offsets, firstMaps, lastMaps);
      } catch (IllegalArgumentException e) {
        throw corrupt(file, e.getMessage());
      }
    } catch (IOException e) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED, "cannot read partition file " + file + ": " + e, e);
    }
  }

  private record Trailer(long indexOffset, int chunkCount, int indexCrc, int version) {
    static Trailer decode(Path file, ByteBuffer trailer) {
      int magic = trailer.getInt(PartitionFileFormat.TRAILER_MAGIC);
      if (magic != PartitionFileFormat.MAGIC) {
        throw corrupt(
            file,
            String.format(
                "bad magic %08x, expected %08x: not a Faro partition file " + "or truncated",
                magic, PartitionFileFormat.MAGIC));
      }
      int version = trailer.getInt(PartitionFileFormat.TRAILER_VERSION);
      if (version > PartitionFileFormat.VERSION) {
        throw new NewerFormatException(file, version);
      }
      if (version < PartitionFileFormat.VERSION_WITHOUT_MAP_RANGES) {
        throw corrupt(
            file,
            "unsupported format version "
                + version
                + ", this worker reads versions "
                + PartitionFileFormat.VERSION_WITHOUT_MAP_RANGES
                + " to "
                + PartitionFileFormat.VERSION);
      }
      return new Trailer(
          trailer.getLong(PartitionFileFormat.TRAILER_INDEX_OFFSET),
          trailer.getInt(PartitionFileFormat.TRAILER_CHUNK_COUNT),
          trailer.getInt(PartitionFileFormat.TRAILER_INDEX_CRC),
          version);
    }
  }

  private static ByteBuffer readFully(FileChannel channel, long position, int length)
      throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(length);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer, position + buffer.position()) < 0) {
        throw new EOFException("end of file at " + (position + buffer.position()));
      }
    }
    return buffer.flip();
  }

  private static FaroException corrupt(Path file, String why) {
    return new FaroException(ErrorCode.DATA_CORRUPTED, "partition file " + file + " " + why);
  }
}
