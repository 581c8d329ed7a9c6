package io.faro.worker.storage;

import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;

/**
 * Where the chunks of one partition file start: {@code n + 1} offsets for {@code n} chunks, the
 * first 0 and the last the data length, strictly increasing (no chunk is empty). An empty partition
 * has the single offset 0 and no chunks. Immutable.
 */
public final class ChunkIndex {
  private static final ChunkIndex EMPTY = new ChunkIndex(new long[] {0});

  private final long[] offsets;

  private ChunkIndex(long[] offsets) {
    this.offsets = offsets;
  }

  public static ChunkIndex empty() {
    return EMPTY;
  }

  /**
   * Copies {@code offsets}.
   *
   * @throws IllegalArgumentException when they do not start at 0 or do not strictly increase
   */
  public static ChunkIndex of(long... offsets) {
    if (offsets.length == 0 || offsets[0] != 0) {
      throw new IllegalArgumentException(
          "chunk offsets must start at 0: " + Arrays.toString(offsets));
    }
    for (int i = 1; i < offsets.length; i++) {
      if (offsets[i] <= offsets[i - 1]) {
        throw new IllegalArgumentException(
            "chunk offsets must strictly increase, offset "
                + i
                + " does not: "
                + Arrays.toString(offsets));
      }
    }
    return new ChunkIndex(offsets.clone());
  }

  public int chunkCount() {
    return offsets.length - 1;
  }

  /** Start of chunk {@code i}; {@code offset(chunkCount())} is the data length. */
  public long offset(int i) {
    return offsets[i];
  }

  public long chunkLength(int chunk) {
    return offsets[chunk + 1] - offsets[chunk];
  }

  public long dataLength() {
    return offsets[offsets.length - 1];
  }

  public List<Long> asList() {
    return LongStream.of(offsets).boxed().toList();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ChunkIndex other && Arrays.equals(offsets, other.offsets);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(offsets);
  }

  @Override
  public String toString() {
    return "ChunkIndex" + Arrays.toString(offsets);
  }
}
