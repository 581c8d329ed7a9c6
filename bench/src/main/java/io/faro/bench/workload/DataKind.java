package io.faro.bench.workload;

/** What the bytes of a record look like to a compressor. */
public enum DataKind {
  /**
   * Words from a small vocabulary after a random key: LZ4 shrinks it, as it does most shuffle data.
   */
  COMPRESSIBLE,
  /** Uniformly random bytes: incompressible, the worst case for the wire and the disk. */
  RANDOM
}
