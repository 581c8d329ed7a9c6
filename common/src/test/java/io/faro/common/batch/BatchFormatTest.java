package io.faro.common.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BatchFormatTest {
  private final Random random = new Random(42);

  private byte[] compressible(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) ('a' + random.nextInt(4));
    }
    return b;
  }

  private ByteBuf chunkOf(BatchEncoder encoder, List<byte[]> records) {
    ByteBuf chunk = Unpooled.buffer();
    int batchId = 0;
    for (byte[] r : records) {
      ByteBuf batch = encoder.encode(3, 1, batchId++, r, 0, r.length);
      chunk.writeBytes(batch);
      batch.release();
    }
    return chunk;
  }

  @Test
  void encodesAndDecodesCompressedAndRawBatches() {
    List<byte[]> records = new ArrayList<>();
    records.add(compressible(10_000));
    byte[] random = new byte[5000];
    this.random.nextBytes(random);
    records.add(random);
    records.add(new byte[0]);
    for (boolean compress : new boolean[] {true, false}) {
      ByteBuf chunk = chunkOf(new BatchEncoder(compress, PooledByteBufAllocator.DEFAULT), records);
      assertThat(BatchFormat.checkStructure(chunk, 0, chunk.readableBytes())).isEqualTo(3);
      List<byte[]> decoded = new ArrayList<>();
      new BatchDecoder()
          .decode(
              chunk,
              "test",
              (m, a, b) -> true,
              batch -> {
                assertThat(batch.mapId()).isEqualTo(3);
                assertThat(batch.attemptId()).isEqualTo(1);
                decoded.add(Arrays.copyOf(batch.data(), batch.length()));
              });
      assertThat(decoded).containsExactlyElementsOf(records);
      if (compress) {
        assertThat(chunk.readableBytes()).isLessThan(10_000 + 5000 + 3 * BatchFormat.HEADER);
      }
      chunk.release();
    }
  }

  @Test
  void filterSkipsBatchesWithoutDecodingThem() {
    ByteBuf chunk =
        chunkOf(
            new BatchEncoder(true, PooledByteBufAllocator.DEFAULT),
            List.of(compressible(100), compressible(200), compressible(300)));
    List<Integer> kept = new ArrayList<>();
    new BatchDecoder()
        .decode(chunk, "test", (m, a, b) -> b != 1, batch -> kept.add(batch.batchId()));
    assertThat(kept).containsExactly(0, 2);
    chunk.release();
  }

  @Test
  void everySingleFlippedByteIsDetected() {
    ByteBuf chunk =
        chunkOf(
            new BatchEncoder(true, PooledByteBufAllocator.DEFAULT), List.of(compressible(2000)));
    for (int i = 0; i < chunk.readableBytes(); i++) {
      ByteBuf copy = chunk.copy();
      copy.setByte(i, copy.getByte(i) ^ 0x10);
      assertThatThrownBy(
              () ->
                  new BatchDecoder()
                      .decode(copy, "partition 7 chunk 0", (m, a, b) -> true, b -> {}))
          .isInstanceOf(FaroException.class)
          .satisfies(
              e -> assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.DATA_CORRUPTED))
          .hasMessageContaining("partition 7 chunk 0");
      copy.release();
    }
    chunk.release();
  }

  @Test
  void structureCheckRejectsTruncationAndBadLengths() {
    ByteBuf chunk =
        chunkOf(new BatchEncoder(false, PooledByteBufAllocator.DEFAULT), List.of(new byte[50]));
    assertThatThrownBy(() -> BatchFormat.checkStructure(chunk, 0, chunk.readableBytes() - 1))
        .hasMessageContaining("declares 50 data bytes");
    assertThatThrownBy(() -> BatchFormat.checkStructure(chunk, 0, 10))
        .hasMessageContaining("truncated");
    chunk.setByte(BatchFormat.CODEC, 9);
    assertThatThrownBy(() -> BatchFormat.checkStructure(chunk, 0, chunk.readableBytes()))
        .hasMessageContaining("unknown codec 9");
    chunk.release();
  }
}
