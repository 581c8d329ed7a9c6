package io.faro.common.id;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The kind of a worker disk, fastest first. New partitions prefer faster tiers. */
public enum DiskTier {
  NVME,
  SSD,
  HDD;

  public static DiskTier parse(String text) {
    try {
      return valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "unknown disk tier '" + text + "', expected one of " + allowed());
    }
  }

  public static String allowed() {
    return Arrays.stream(values())
        .map(t -> t.name().toLowerCase(Locale.ROOT))
        .collect(Collectors.joining(", "));
  }

  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
