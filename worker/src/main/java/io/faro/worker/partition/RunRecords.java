package io.faro.worker.partition;

import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.proto.CommittedFileRecordP;
import io.faro.proto.RunIndexEntryP;
import io.faro.proto.RunIndexP;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Extent;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.PartitionFileFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The records of locations in runs: what the worker's metadata store keeps of each (its extents, as
 * run numbers, and its chunk index), and the run index written next to a shuffle's runs at each
 * finish ({@code index-<n>.data}: a {@link RunIndexP}, then a big-endian CRC32C of it and the magic
 * {@value #MAGIC_TEXT}), from which a worker whose store was lost records them again.
 */
public final class RunRecords {
  private static final String MAGIC_TEXT = "FRIX";
  private static final int MAGIC = 0x46524958;
  private static final int TRAILER = 8;

  /** An index larger than this is not read (a damaged or foreign file). */
  private static final long MAX_INDEX_BYTES = 1L << 30;

  private RunRecords() {}

  /**
   * A record of a committed location with {@code chunks}, in either layout, with what every record
   * has: its data length, chunk count and format version (the caller adds where the data lies).
   */
  public static CommittedFileRecordP.Builder of(ChunkIndex chunks) {
    return CommittedFileRecordP.newBuilder()
        .setDataLength(chunks.dataLength())
        .setChunkCount(chunks.chunkCount())
        .setFormatVersion(
            chunks.hasMapRanges()
                ? PartitionFileFormat.VERSION
                : PartitionFileFormat.VERSION_WITHOUT_MAP_RANGES);
  }

  /**
   * The record of {@code c}, a location in runs of the disk whose directory is {@code diskRoot}
   * (index {@code diskIndex}).
   *
   * @throws IllegalArgumentException when a piece of its data is not a run of its shuffle there
   */
  public static CommittedFileRecordP record(
      PartitionCommit.Committed c, Path diskRoot, int diskIndex) {
    ChunkIndex chunks = c.chunks();
    CommittedFileRecordP.Builder r = of(chunks).setDiskIndex(diskIndex);
    for (Extent e : c.data().list()) {
      int run = FileLayout.runNumber(e.file());
      if (run < 0 || !e.file().equals(FileLayout.runFile(diskRoot, c.key().shuffle(), run))) {
        throw new IllegalArgumentException(
            "partition " + c.key() + " has data in " + e.file() + ", not a run of " + diskRoot);
      }
      r.addExtentRuns(run).addExtentOffsets(e.offset()).addExtentLengths(e.length());
    }
    for (int i = 0; i <= chunks.chunkCount(); i++) {
      r.addChunkOffsets(chunks.offset(i));
    }
    if (chunks.hasMapRanges()) {
      for (int i = 0; i < chunks.chunkCount(); i++) {
        r.addChunkFirstMaps(chunks.firstMap(i)).addChunkLastMaps(chunks.lastMap(i));
      }
    }
    return r.build();
  }

  /**
   * Writes the run index {@code file} of {@code committed}, forced when {@code sync}; returns its
   * size.
   */
  static long writeIndex(
      Path file,
      List<PartitionCommit.Committed> committed,
      Path diskRoot,
      int diskIndex,
      boolean sync)
      throws IOException {
    RunIndexP.Builder index = RunIndexP.newBuilder();
    for (PartitionCommit.Committed c : committed) {
      index.addEntries(
          RunIndexEntryP.newBuilder()
              .setPartition(c.key().partition())
              .setEpoch(c.key().epoch())
              .setRecord(record(c, diskRoot, diskIndex)));
    }
    byte[] body = index.build().toByteArray();
    ByteBuffer bytes = ByteBuffer.allocate(body.length + TRAILER);
    bytes.put(body).putInt(crc(body, body.length)).putInt(MAGIC).flip();
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
      if (sync) {
        channel.force(true);
      }
    } catch (IOException | RuntimeException e) {
      // Not counted on the disk, so not left there either (its deletion would uncount it).
      try {
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // A leftover then: deleted at the next start unless a kept run shares its directory.
      }
      throw e;
    }
    return body.length + TRAILER;
  }

  /**
   * The records in the run index {@code file} of {@code shuffle}, by location.
   *
   * @throws IOException when it cannot be read, or is not a whole run index
   */
  public static Map<PartitionKey, CommittedFileRecordP> readIndex(Path file, ShuffleId shuffle)
      throws IOException {
    long size = Files.size(file);
    if (size < TRAILER || size > MAX_INDEX_BYTES) {
      throw new IOException(file + " is no run index: " + size + " bytes");
    }
    byte[] all = Files.readAllBytes(file);
    ByteBuffer trailer = ByteBuffer.wrap(all, all.length - TRAILER, TRAILER);
    int crc = trailer.getInt();
    if (trailer.getInt() != MAGIC || crc != crc(all, all.length - TRAILER)) {
      throw new IOException(file + " is no whole run index (magic or checksum)");
    }
    RunIndexP index = RunIndexP.parseFrom(ByteBuffer.wrap(all, 0, all.length - TRAILER));
    Map<PartitionKey, CommittedFileRecordP> records = new LinkedHashMap<>();
    for (RunIndexEntryP e : index.getEntriesList()) {
      try {
        records.put(new PartitionKey(shuffle, e.getPartition(), e.getEpoch()), e.getRecord());
      } catch (IllegalArgumentException bad) {
        throw new IOException(file + " names a bad location: " + bad.getMessage(), bad);
      }
    }
    return records;
  }

  private static int crc(byte[] bytes, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, length);
    return (int) crc.getValue();
  }
}
