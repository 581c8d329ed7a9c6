package io.faro.bench.jmh;

import io.faro.bench.workload.DataKind;
import io.faro.bench.workload.RecordGenerator;
import io.faro.common.batch.BatchEncoder;
import io.faro.common.batch.BatchFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The benchmarks' input: record bytes as {@code faro bench} generates them, and batches of them.
 */
final class SampleRecords {
  static final int RECORD_SIZE = 100;

  private SampleRecords() {}

  /** {@code length} bytes of 100-byte records (the last one cut short). */
  static byte[] raw(int length, DataKind data) {
    byte[] out = new byte[length];
    byte[] record = new byte[RECORD_SIZE];
    RecordGenerator generator = new RecordGenerator(42, 0, RECORD_SIZE, 1, data);
    for (int offset = 0; offset < length; offset += RECORD_SIZE) {
      generator.next(record);
      System.arraycopy(record, 0, out, offset, Math.min(RECORD_SIZE, length - offset));
    }
    return out;
  }

  /**
   * {@code count} encoded batches of {@code rawLength} record bytes each, back to back in one
   * direct buffer, as in a pushed part or a fetched chunk. The caller owns the buffer.
   */
  static ByteBuf batches(int count, int rawLength, DataKind data, boolean compress) {
    return batches(
        count, rawLength, data, compress ? BatchFormat.Codec.LZ4 : BatchFormat.Codec.NONE);
  }

  /** As {@link #batches(int, int, DataKind, boolean)}, with {@code codec}. */
  static ByteBuf batches(int count, int rawLength, DataKind data, BatchFormat.Codec codec) {
    byte[] raw = raw(rawLength, data);
    ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer();
    try (BatchEncoder encoder =
        new BatchEncoder(codec, BatchEncoder.DEFAULT_ZSTD_LEVEL, PooledByteBufAllocator.DEFAULT)) {
      for (int i = 0; i < count; i++) {
        ByteBuf batch = encoder.encode(0, 0, i, raw, 0, raw.length);
        out.writeBytes(batch);
        batch.release();
      }
    }
    return out;
  }
}
