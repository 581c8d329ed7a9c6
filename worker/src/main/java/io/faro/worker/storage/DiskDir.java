package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.config.ConfigOption;
import io.faro.common.id.DiskTier;
import java.nio.file.Path;

/**
 * One configured worker disk: the directory Faro owns on it, its tier and, optionally, how many
 * bytes Faro may keep there (a disk shared with HDFS, say). Parsed from one item of {@code
 * faro.worker.dirs}, written {@code path:tier} or {@code path:tier:capacity}.
 *
 * @param capacityBytes the most Faro's files may take on this disk; {@link Long#MAX_VALUE} for no
 *     limit but the file system's
 */
public record DiskDir(Path path, DiskTier tier, long capacityBytes) {
  public DiskDir {
    requireNonNull(path, "path is null");
    requireNonNull(tier, "tier is null");
    if (capacityBytes <= 0) {
      throw new IllegalArgumentException(
          "capacity of " + path + " must be positive, not " + capacityBytes);
    }
  }

  /** A disk limited only by its file system. */
  public DiskDir(Path path, DiskTier tier) {
    this(path, tier, Long.MAX_VALUE);
  }

  /**
   * Parses {@code path:tier} or {@code path:tier:capacity} (a size like 500g). Paths may not
   * contain a colon.
   *
   * @throws IllegalArgumentException naming the item, the allowed tiers and the capacity's form
   */
  public static DiskDir parse(String text) {
    String[] fields = text.split(":", -1);
    if (fields.length < 2 || fields.length > 3 || fields[0].isBlank() || fields[1].isBlank()) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is not path:tier or path:tier:capacity (tier one of "
              + DiskTier.allowed()
              + ", capacity a size like 500g)");
    }
    DiskTier tier = DiskTier.parse(fields[1]);
    long capacity = Long.MAX_VALUE;
    if (fields.length == 3) {
      try {
        capacity = ConfigOption.parseSize(fields[2].trim());
      } catch (IllegalArgumentException | ArithmeticException e) {
        throw new IllegalArgumentException(
            "'" + text + "': capacity '" + fields[2] + "' is not a size like 512m or 2t", e);
      }
      if (capacity <= 0) {
        throw new IllegalArgumentException("'" + text + "': capacity must be positive");
      }
    }
    return new DiskDir(Path.of(fields[0].trim()), tier, capacity);
  }

  @Override
  public String toString() {
    return path
        + ":"
        + tier.configName()
        + (capacityBytes == Long.MAX_VALUE ? "" : ":" + capacityBytes);
  }
}
