package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;

/**
 * One disk a worker declared when it registered. {@code index} is the disk's position in the
 * worker's own disk list; partition locations name disks by it.
 */
public record DiskSpec(int index, String path, DiskTier tier, long capacityBytes) {
  public DiskSpec {
    requireNonNull(path, "path is null");
    requireNonNull(tier, "tier is null");
    if (index < 0 || capacityBytes < 0) {
      throw new IllegalArgumentException(
          "bad disk " + path + ": index " + index + ", capacity " + capacityBytes);
    }
  }
}
