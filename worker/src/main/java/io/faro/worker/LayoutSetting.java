package io.faro.worker;

import io.faro.common.id.DiskTier;
import io.faro.worker.storage.IoMode;
import io.faro.worker.storage.Layout;

/** A value of faro.worker.tier.TIER.layout. */
public enum LayoutSetting {
  /** runs on hdd disks read through the page cache, files everywhere else. */
  AUTO,
  FILES,
  RUNS;

  /** The layout of a disk of {@code tier} with this setting, under {@code ioMode}. */
  Layout resolve(DiskTier tier, IoMode ioMode) {
    return switch (this) {
      case FILES -> Layout.FILES;
      case RUNS -> Layout.RUNS;
      case AUTO -> tier == DiskTier.HDD && ioMode != IoMode.DIRECT ? Layout.RUNS : Layout.FILES;
    };
  }
}
