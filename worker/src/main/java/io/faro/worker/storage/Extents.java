package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where the data of one committed location lies on its disk: its bytes are the extents' bytes, in
 * order. A location of the {@link Layout#FILES} layout has one extent, the start of its own file
 * (whose index and trailer follow the data); one of the {@link Layout#RUNS} layout has an extent in
 * each run its data went into. Chunk offsets ({@link ChunkIndex}) count in the location's data, not
 * in any file.
 *
 * <p>Immutable.
 */
public final class Extents {
  /** A location that received no data. */
  public static final Extents NONE = new Extents(new Extent[0], false);

  private final Extent[] extents;
  // starts[i]: the data offset where extents[i] begins; starts[n]: the data length.
  private final long[] starts;
  private final boolean runs;

  private Extents(Extent[] extents, boolean runs) {
    this.extents = extents;
    this.runs = runs;
    this.starts = new long[extents.length + 1];
    for (int i = 0; i < extents.length; i++) {
      starts[i + 1] = starts[i] + extents[i].length();
    }
  }

  /** The data of a location of the files layout: the first {@code length} bytes of {@code file}. */
  public static Extents ofFile(Path file, long length) {
    return new Extents(new Extent[] {new Extent(file, 0, length)}, false);
  }

  /** The data of a location of the runs layout, in order; empty extents are left out. */
  public static Extents inRuns(List<Extent> extents) {
    List<Extent> kept = new ArrayList<>(extents.size());
    for (Extent e : requireNonNull(extents, "extents is null")) {
      if (e.length() > 0) {
        kept.add(e);
      }
    }
    return kept.isEmpty() ? NONE : new Extents(kept.toArray(new Extent[0]), true);
  }

  /** Bytes of data. */
  public long length() {
    return starts[extents.length];
  }

  /** Whether the data lies in runs (else in a file of its own, or nowhere). */
  public boolean inRuns() {
    return runs;
  }

  public List<Extent> list() {
    return List.of(extents);
  }

  /** The location's own file, for the files layout; empty in runs or with no data. */
  public Optional<Path> ownFile() {
    return runs || extents.length == 0 ? Optional.empty() : Optional.of(extents[0].file());
  }

  /** The files the data lies in, in the order of first use. */
  public Set<Path> files() {
    Set<Path> files = new LinkedHashSet<>();
    for (Extent e : extents) {
      files.add(e.file());
    }
    return files;
  }

  /**
   * The pieces of files that hold the data's bytes {@code [offset, offset + length)}, in order.
   *
   * @throws IllegalArgumentException for a range outside the data, or an empty one
   */
  public List<Extent> slice(long offset, long length) {
    if (offset < 0 || length <= 0 || offset + length > length()) {
      throw new IllegalArgumentException(
          "bytes [" + offset + ", " + (offset + length) + ") lie outside " + length() + " bytes");
    }
    int i = Arrays.binarySearch(starts, 0, extents.length, offset);
    if (i < 0) {
      i = -i - 2; // the extent that starts before offset
    }
    while (extents[i].length() == 0 || starts[i + 1] <= offset) {
      i++;
    }
    List<Extent> pieces = new ArrayList<>(2);
    long at = offset;
    long end = offset + length;
    for (; at < end; i++) {
      long from = at - starts[i];
      long n = Math.min(end, starts[i + 1]) - at;
      pieces.add(new Extent(extents[i].file(), extents[i].offset() + from, n));
      at += n;
    }
    return pieces;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Extents other
        && runs == other.runs
        && Arrays.equals(extents, other.extents);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(extents) * 31 + (runs ? 1 : 0);
  }

  @Override
  public String toString() {
    return (runs ? "runs" : "file") + Arrays.toString(extents);
  }
}
