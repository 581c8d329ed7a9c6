package io.faro.bench.workload;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A 64-bit hash of one record's bytes, computed by the map task when it writes a record and by the
 * reader when it reads it back. Partition checksums are sums of these, so they do not depend on the
 * order in which batches of different maps land in a partition's file. Eight bytes per step, so
 * hashing costs far less than moving the bytes.
 */
public final class RecordHash {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long PRIME_1 = 0x9E3779B185EBCA87L;
  private static final long PRIME_2 = 0xC2B2AE3D27D4EB4FL;

  private RecordHash() {}

  public static long of(byte[] data, int offset, int length) {
    long h = length * PRIME_1;
    int i = 0;
    for (; i + Long.BYTES <= length; i += Long.BYTES) {
      h = Long.rotateLeft(h ^ ((long) LONGS.get(data, offset + i) * PRIME_2), 31) * PRIME_1;
    }
    for (; i < length; i++) {
      h = Long.rotateLeft(h ^ ((data[offset + i] & 0xffL) * PRIME_2), 11) * PRIME_1;
    }
    // Final avalanche (as in splitmix64), so that sums of hashes do not cancel out patterns.
    h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
    h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
    return h ^ (h >>> 31);
  }
}
