package io.faro.worker.storage;

import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;

/**
 * Where the chunks of one partition file start: {@code n + 1} offsets for {@code n} chunks, the
 * first 0 and the last the data length, strictly increasing (no chunk is empty). An empty partition
 * has the single offset 0 and no chunks. With each chunk, the smallest and the largest map index of
 * its batches, when known (files of format version 2; not of version 1): a reader of some maps of a
 * partition fetches only the chunks whose range meets them. Immutable.
 */
public final class ChunkIndex {
  private static final ChunkIndex EMPTY = new ChunkIndex(new long[] {0}, new int[0], new int[0]);

  private final long[] offsets;
  // Per chunk, or null when unknown (a version 1 file).
  private final int[] firstMaps;
  private final int[] lastMaps;

  private ChunkIndex(long[] offsets, int[] firstMaps, int[] lastMaps) {
    this.offsets = offsets;
    this.firstMaps = firstMaps;
    this.lastMaps = lastMaps;
  }

  public static ChunkIndex empty() {
    return EMPTY;
  }

  /**
   * Copies {@code offsets}; the chunks' map ranges unknown.
   *
   * @throws IllegalArgumentException when they do not start at 0 or do not strictly increase
   */
  public static ChunkIndex of(long... offsets) {
    checkOffsets(offsets);
    return new ChunkIndex(offsets.clone(), null, null);
  }

  /**
   * Copies {@code offsets} and each chunk's first and last map index.
   *
   * @throws IllegalArgumentException when the offsets do not start at 0 or do not strictly
   *     increase, or a range is not one per chunk with {@code 0 <= first <= last}
   */
  public static ChunkIndex of(long[] offsets, int[] firstMaps, int[] lastMaps) {
    checkOffsets(offsets);
    if (firstMaps.length != offsets.length - 1 || lastMaps.length != offsets.length - 1) {
      throw new IllegalArgumentException(
          "map ranges of "
              + firstMaps.length
              + " and "
              + lastMaps.length
              + " chunks for "
              + (offsets.length - 1)
              + " chunks");
    }
    for (int i = 0; i < firstMaps.length; i++) {
      if (firstMaps[i] < 0 || lastMaps[i] < firstMaps[i]) {
        throw new IllegalArgumentException(
            "chunk " + i + " has map range [" + firstMaps[i] + ", " + lastMaps[i] + "]");
      }
    }
    return new ChunkIndex(offsets.clone(), firstMaps.clone(), lastMaps.clone());
  }

  private static void checkOffsets(long[] offsets) {
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

  /** Whether each chunk's map range is known. */
  public boolean hasMapRanges() {
    return firstMaps != null;
  }

  /** The smallest map index of chunk {@code chunk}'s batches; only with {@link #hasMapRanges}. */
  public int firstMap(int chunk) {
    return firstMaps[chunk];
  }

  /** The largest map index of chunk {@code chunk}'s batches; only with {@link #hasMapRanges}. */
  public int lastMap(int chunk) {
    return lastMaps[chunk];
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ChunkIndex other
        && Arrays.equals(offsets, other.offsets)
        && Arrays.equals(firstMaps, other.firstMaps)
        && Arrays.equals(lastMaps, other.lastMaps);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(offsets);
  }

  @Override
  public String toString() {
    return "ChunkIndex"
        + Arrays.toString(offsets)
        + (firstMaps == null
            ? ""
            : " maps " + Arrays.toString(firstMaps) + "-" + Arrays.toString(lastMaps));
  }
}
