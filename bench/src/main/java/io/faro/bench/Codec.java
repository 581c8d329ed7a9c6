package io.faro.bench;

import java.util.Locale;

/** How map tasks encode batches: {@code faro.client.compression.codec}. */
public enum Codec {
  LZ4,
  ZSTD,
  NONE;

  /** The value of {@code faro.client.compression.codec}. */
  public String setting() {
    return name().toLowerCase(Locale.ROOT);
  }
}
