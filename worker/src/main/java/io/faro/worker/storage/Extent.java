package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;

/** {@code length} bytes of {@code file} from {@code offset}: one piece of a location's data. */
public record Extent(Path file, long offset, long length) {
  public Extent {
    requireNonNull(file, "file is null");
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException(
          "bad extent of " + file + ": " + length + " bytes at " + offset);
    }
  }

  /** The offset just past the extent. */
  public long end() {
    return offset + length;
  }
}
