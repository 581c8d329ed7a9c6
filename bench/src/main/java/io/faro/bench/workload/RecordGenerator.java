package io.faro.bench.workload;

import static java.util.Objects.requireNonNull;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The records of one map task, deterministic for a seed and map id: a xorshift64* sequence, so a
 * run can be repeated exactly and generating a 100-byte record costs a few nanoseconds (the
 * benchmark measures Faro, not its own data source).
 *
 * <p>Record layout, {@code recordSize} bytes: {@code [long key][filler]}, little-endian. The key
 * decides the partition ({@link #partitionOf}), so a record read from the wrong partition shows up
 * in the per-partition tallies. The filler is random ({@link DataKind#RANDOM}) or 8-byte words
 * drawn from a 16-word vocabulary ({@link DataKind#COMPRESSIBLE}).
 *
 * <p>Not thread-safe: one per map task.
 */
public final class RecordGenerator {
  /** A record holds at least its key. */
  public static final int MIN_RECORD_SIZE = Long.BYTES;

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long[] VOCABULARY =
      vocabulary(
          "shuffle ",
          "partitn ",
          "reducer ",
          "mapper  ",
          "record  ",
          "network ",
          "flushes ",
          "chunked ",
          "worker  ",
          "master  ",
          "spark   ",
          "faro    ",
          "bytes   ",
          "commit  ",
          "fetch   ",
          "batch   ");

  private final int recordSize;
  private final int partitions;
  private final DataKind data;
  private long state;

  public RecordGenerator(long seed, int mapId, int recordSize, int partitions, DataKind data) {
    if (recordSize < MIN_RECORD_SIZE) {
      throw new IllegalArgumentException(
          "record size " + recordSize + " is below " + MIN_RECORD_SIZE);
    }
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions must be positive: " + partitions);
    }
    this.recordSize = recordSize;
    this.partitions = partitions;
    this.data = requireNonNull(data, "data is null");
    // splitmix64 of (seed, mapId): nearby seeds and map ids give unrelated sequences; never 0,
    // which xorshift would keep forever.
    long z = seed + 0x9E3779B97F4A7C15L * (mapId + 1L);
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    this.state = (z ^ (z >>> 31)) | 1;
  }

  /**
   * The partition a record with {@code key} belongs to: the key's high bits scaled to [0,
   * partitions).
   */
  public static int partitionOf(long key, int partitions) {
    return (int) (((key >>> 32) * partitions) >>> 32);
  }

  /** The key of the record at {@code offset}. */
  public static long key(byte[] record, int offset) {
    return (long) LONGS.get(record, offset);
  }

  /** Writes the next record into {@code record[0, recordSize)}; returns its partition. */
  public int next(byte[] record) {
    long key = nextLong();
    LONGS.set(record, 0, key);
    if (data == DataKind.RANDOM) {
      fillRandom(record);
    } else {
      fillWords(record);
    }
    return partitionOf(key, partitions);
  }

  private void fillRandom(byte[] record) {
    int offset = Long.BYTES;
    for (; offset + Long.BYTES <= recordSize; offset += Long.BYTES) {
      LONGS.set(record, offset, nextLong());
    }
    writeTail(record, offset, nextLong());
  }

  private void fillWords(byte[] record) {
    int offset = Long.BYTES;
    long choices = 0;
    int left = 0;
    long word = VOCABULARY[0];
    for (; offset + Long.BYTES <= recordSize; offset += Long.BYTES) {
      if (left == 0) {
        choices = nextLong();
        left = 16; // 16 choices of 4 bits per random long
      }
      word = VOCABULARY[(int) (choices & 15)];
      choices >>>= 4;
      left--;
      LONGS.set(record, offset, word);
    }
    writeTail(record, offset, word);
  }

  private void writeTail(byte[] record, int offset, long bits) {
    for (int i = 0; offset + i < recordSize; i++) {
      record[offset + i] = (byte) (bits >>> (8 * i));
    }
  }

  private long nextLong() {
    long x = state;
    x ^= x >>> 12;
    x ^= x << 25;
    x ^= x >>> 27;
    state = x;
    return x * 0x2545F4914F6CDD1DL;
  }

  private static long[] vocabulary(String... words) {
    long[] out = new long[words.length];
    for (int i = 0; i < words.length; i++) {
      byte[] bytes = words[i].getBytes(StandardCharsets.US_ASCII);
      if (bytes.length != Long.BYTES) {
        throw new IllegalArgumentException("vocabulary words are 8 bytes: '" + words[i] + "'");
      }
      out[i] = (long) LONGS.get(bytes, 0);
    }
    return out;
  }
}
