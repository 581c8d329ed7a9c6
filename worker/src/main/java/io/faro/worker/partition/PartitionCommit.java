package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Extents;
import java.nio.file.Path;
import java.util.Optional;

/** The outcome of committing one partition location. */
public sealed interface PartitionCommit {
  PartitionKey key();

  /**
   * The data is complete and durable (as faro.worker.commit.sync asks).
   *
   * @param data where the data lies: the partition's own file, or extents in runs ({@link
   *     Extents#NONE} for a partition that received no data)
   * @param chunks the chunk offsets in the data (read back from the file, for a file of its own;
   *     {@link ChunkIndex#empty()} if none)
   */
  record Committed(PartitionKey key, Extents data, ChunkIndex chunks) implements PartitionCommit {
    public Committed {
      requireNonNull(key, "key is null");
      requireNonNull(data, "data is null");
      requireNonNull(chunks, "chunks is null");
      if (data.length() != chunks.dataLength()) {
        throw new IllegalArgumentException(
            "partition "
                + key
                + " has "
                + data.length()
                + " bytes of data but chunks of "
                + chunks.dataLength());
      }
    }

    /** A partition of the files layout: its own file, or none when it received no data. */
    public Committed(PartitionKey key, Optional<Path> file, ChunkIndex chunks) {
      this(
          key,
          requireNonNull(file, "file is null")
              .map(f -> Extents.ofFile(f, chunks.dataLength()))
              .orElse(Extents.NONE),
          chunks);
      if (file.isEmpty() && chunks.chunkCount() != 0) {
        throw new IllegalArgumentException("partition " + key + " has chunks but no file");
      }
    }

    /** A location that received no data. */
    public static Committed empty(PartitionKey key) {
      return new Committed(key, Extents.NONE, ChunkIndex.empty());
    }

    /** The partition's own file (files layout); empty in runs, or with no data. */
    public Optional<Path> file() {
      return data.ownFile();
    }

    public long bytes() {
      return chunks.dataLength();
    }
  }

  /** The partition's data is lost on this worker; {@code reason} says why. */
  record Failed(PartitionKey key, String reason) implements PartitionCommit {
    public Failed {
      requireNonNull(key, "key is null");
      requireNonNull(reason, "reason is null");
    }
  }
}
