package io.faro.bench;

/** How map tasks encode batches: {@code faro.client.push.compress} on or off. */
public enum Codec {
  LZ4(true),
  NONE(false);

  private final boolean compress;

  Codec(boolean compress) {
    this.compress = compress;
  }

  /** The value of {@code faro.client.push.compress}. */
  public boolean compress() {
    return compress;
  }
}
