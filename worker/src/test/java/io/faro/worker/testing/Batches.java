package io.faro.worker.testing;

import io.faro.common.batch.BatchEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.Random;

/** Builds real batches (io.faro.common.batch) with seeded random records. */
public final class Batches {
  private final BatchEncoder encoder;
  private final Random random;

  public Batches(boolean compress, long seed) {
    this.encoder = new BatchEncoder(compress, PooledByteBufAllocator.DEFAULT);
    this.random = new Random(seed);
  }

  /** One encoded batch of {@code rawLength} record bytes; the caller owns it. */
  public ByteBuf batch(int mapId, int attemptId, int batchId, int rawLength) {
    byte[] raw = new byte[rawLength];
    // Half random, half repeated, so that LZ4 has something to compress.
    for (int i = 0; i < rawLength; i++) {
      raw[i] = i % 2 == 0 ? (byte) random.nextInt() : (byte) (i / 64);
    }
    return encoder.encode(mapId, attemptId, batchId, raw, 0, rawLength);
  }

  /** One encoded batch as bytes. */
  public byte[] batchBytes(int mapId, int attemptId, int batchId, int rawLength) {
    ByteBuf batch = batch(mapId, attemptId, batchId, rawLength);
    try {
      return ByteBufUtil.getBytes(batch);
    } finally {
      batch.release();
    }
  }

  public Random random() {
    return random;
  }
}
