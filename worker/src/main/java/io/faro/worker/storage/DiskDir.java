package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import java.nio.file.Path;

/**
 * One configured worker disk: the directory Faro owns on it and its tier. Parsed from one
 * item of {@code faro.worker.dirs}, written {@code path:tier}.
 */
public record DiskDir(Path path, DiskTier tier) {
  public DiskDir {
    requireNonNull(path, "path is null");
    requireNonNull(tier, "tier is null");
  }

  /**
   * Parses {@code path:tier}. The tier follows the last colon, so paths may not contain one.
   *
   * @throws IllegalArgumentException naming the item and the allowed tiers
   */
  public static DiskDir parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException(
          "'" + text + "' is not path:tier (tier one of " + DiskTier.allowed() + ")");
    }
    DiskTier tier = DiskTier.parse(text.substring(colon + 1));
    return new DiskDir(Path.of(text.substring(0, colon).trim()), tier);
  }

  @Override
  public String toString() {
    return path + ":" + tier.configName();
  }
}
