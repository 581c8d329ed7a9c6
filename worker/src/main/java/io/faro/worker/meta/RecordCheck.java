package io.faro.worker.meta;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionKey;
import io.faro.proto.CommittedFileRecordP;
import io.faro.worker.partition.PartitionCommit;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.Extent;
import io.faro.worker.storage.Extents;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.PartitionFileReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Checks what a record of the metadata store claims against what the disk holds: the file of a
 * location is inside its disk's directory, there, as long as recorded, with an index and trailer
 * that match; a location in runs has its runs, long enough for its extents, and a whole chunk
 * index. Only a location that passes is served after a restart.
 */
final class RecordCheck {
  private final Disks disks;

  RecordCheck(Disks disks) {
    this.disks = requireNonNull(disks, "disks is null");
  }

  /** Why a recorded location cannot be served. */
  static final class Unservable extends Exception {
    Unservable(String why) {
      super(why, null, false, false);
    }
  }

  /**
   * The chunk index of the recorded location, read from its file once it passed every check (empty
   * for an empty partition).
   *
   * @throws Unservable saying why it cannot be served
   */
  ChunkIndex checked(CommittedFileRecordP r) throws Unservable {
    if (r.getPath().isEmpty()) {
      if (r.getChunkCount() != 0) {
        throw new Unservable("chunks but no file recorded");
      }
      return ChunkIndex.empty();
    }
    if (r.getDiskIndex() < 0 || r.getDiskIndex() >= disks.size()) {
      throw new Unservable(
          "its disk " + r.getDiskIndex() + " is no longer configured (faro.worker.dirs)");
    }
    Optional<Path> resolved = file(r);
    if (resolved.isEmpty()) {
      throw new Unservable(
          "its recorded path " + r.getPath() + " lies outside its disk's directory");
    }
    Path file = resolved.get();
    try {
      if (!Files.isRegularFile(file)) {
        throw new Unservable(file + " is gone");
      }
      long size = Files.size(file);
      if (size != r.getFileLength()) {
        throw new Unservable(
            file + " has " + size + " bytes, " + r.getFileLength() + " were committed");
      }
      ChunkIndex chunks = PartitionFileReader.readIndex(file);
      if (chunks.chunkCount() != r.getChunkCount() || chunks.dataLength() != r.getDataLength()) {
        throw new Unservable(
            file
                + " has "
                + chunks.chunkCount()
                + " chunks of "
                + chunks.dataLength()
                + " bytes, "
                + r.getChunkCount()
                + " of "
                + r.getDataLength()
                + " were committed");
      }
      return chunks;
    } catch (PartitionFileReader.NewerFormatException e) {
      throw e; // a newer Faro's file: neither misread nor deleted
    } catch (IOException | FaroException e) {
      throw new Unservable(e.getMessage());
    }
  }

  /**
   * The recorded location in runs, once it passed every check: its disk is configured, each run it
   * names is there and holds its extents, the extents add up to the recorded data length, and the
   * recorded chunk index is whole and ends there.
   *
   * @throws Unservable saying why it cannot be served
   */
  PartitionCommit.Committed checkedRuns(PartitionKey key, CommittedFileRecordP r)
      throws Unservable {
    if (r.getDiskIndex() < 0 || r.getDiskIndex() >= disks.size()) {
      throw new Unservable(
          "its disk " + r.getDiskIndex() + " is no longer configured (faro.worker.dirs)");
    }
    if (!disks.get(r.getDiskIndex()).reader().readsThroughPageCache()) {
      throw new Unservable(
          "it lies in runs, and its disk now does direct I/O, which does not read runs"
              + " (faro.worker.io.mode, faro.worker.tier.TIER.layout)");
    }
    int count = r.getExtentRunsCount();
    if (r.getExtentOffsetsCount() != count || r.getExtentLengthsCount() != count) {
      throw new Unservable("its recorded extents are not whole");
    }
    Path root = disks.get(r.getDiskIndex()).root();
    Map<Path, Long> ends = new LinkedHashMap<>();
    List<Extent> extents = new ArrayList<>(count);
    try {
      for (int i = 0; i < count; i++) {
        Path run = FileLayout.runFile(root, key.shuffle(), r.getExtentRuns(i));
        Extent e = new Extent(run, r.getExtentOffsets(i), r.getExtentLengths(i));
        extents.add(e);
        ends.merge(run, e.end(), Math::max);
      }
      for (Map.Entry<Path, Long> end : ends.entrySet()) {
        if (!Files.isRegularFile(end.getKey())) {
          throw new Unservable(end.getKey() + " is gone");
        }
        long size = Files.size(end.getKey());
        if (size < end.getValue()) {
          throw new Unservable(
              end.getKey() + " has " + size + " bytes, its extents end at " + end.getValue());
        }
      }
      long[] offsets = r.getChunkOffsetsList().stream().mapToLong(Long::longValue).toArray();
      ChunkIndex chunks =
          r.getChunkFirstMapsCount() == 0
              ? ChunkIndex.of(offsets)
              : ChunkIndex.of(
                  offsets,
                  r.getChunkFirstMapsList().stream().mapToInt(Integer::intValue).toArray(),
                  r.getChunkLastMapsList().stream().mapToInt(Integer::intValue).toArray());
      if (chunks.chunkCount() != r.getChunkCount() || chunks.dataLength() != r.getDataLength()) {
        throw new Unservable("its recorded chunk index does not match its chunk count and length");
      }
      return new PartitionCommit.Committed(key, Extents.inRuns(extents), chunks);
    } catch (IOException | IllegalArgumentException e) {
      throw new Unservable(String.valueOf(e.getMessage()));
    }
  }

  /**
   * The recorded file, if any, when it lies inside its disk's directory (never a file elsewhere).
   */
  Optional<Path> file(CommittedFileRecordP r) {
    if (r.getPath().isEmpty() || r.getDiskIndex() < 0 || r.getDiskIndex() >= disks.size()) {
      return Optional.empty();
    }
    Path root = disks.get(r.getDiskIndex()).root().toAbsolutePath().normalize();
    Path file = root.resolve(r.getPath()).normalize();
    return file.startsWith(root) && !file.equals(root) ? Optional.of(file) : Optional.empty();
  }
}
