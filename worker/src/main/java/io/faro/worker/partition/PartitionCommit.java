package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import io.faro.worker.storage.ChunkIndex;
import java.nio.file.Path;
import java.util.Optional;

/** The outcome of committing one partition location. */
public sealed interface PartitionCommit {
  PartitionKey key();

  /**
   * The file is complete and durable.
   *
   * @param file the partition file; empty for a partition that received no data
   * @param chunks the chunk offsets read back from the file ({@link ChunkIndex#empty()} if none)
   */
  record Committed(PartitionKey key, Optional<Path> file, ChunkIndex chunks)
      implements PartitionCommit {
    public Committed {
      requireNonNull(key, "key is null");
      requireNonNull(file, "file is null");
      requireNonNull(chunks, "chunks is null");
      if (file.isEmpty() && chunks.chunkCount() != 0) {
        throw new IllegalArgumentException("partition " + key + " has chunks but no file");
      }
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
