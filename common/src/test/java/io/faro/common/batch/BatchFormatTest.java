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
    int lz4Bytes = 0;
    for (BatchFormat.Codec codec : BatchFormat.Codec.values()) {
      boolean compress = codec != BatchFormat.Codec.NONE;
      BatchEncoder encoder = new BatchEncoder(codec, 1, PooledByteBufAllocator.DEFAULT);
      ByteBuf chunk = chunkOf(encoder, records);
      encoder.close();
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
        assertThat(chunk.getByte(BatchFormat.CODEC))
            .as("the compressible batch is stored with the codec")
            .isEqualTo(codec.wire());
        int randomBatch = BatchFormat.HEADER + chunk.getInt(BatchFormat.DATA_LENGTH);
        assertThat(chunk.getByte(randomBatch + BatchFormat.CODEC))
            .as("random bytes do not shrink: stored as they are")
            .isEqualTo(BatchFormat.Codec.NONE.wire());
      }
      if (codec == BatchFormat.Codec.LZ4) {
        lz4Bytes = chunk.getInt(BatchFormat.DATA_LENGTH);
      } else if (codec == BatchFormat.Codec.ZSTD) {
        assertThat(chunk.getInt(BatchFormat.DATA_LENGTH))
            .as("ZSTD smaller than LZ4 on the compressible records")
            .isLessThan(lz4Bytes);
      }
      chunk.release();
    }
  }

  @Test
  void aBatchZstdShrinksMoreThanReadersAcceptIsStoredWithLz4() {
    byte[] zeros = new byte[4 << 20]; // ZSTD stores 4 MiB of zeros in a few hundred bytes
    try (BatchEncoder encoder =
            new BatchEncoder(BatchFormat.Codec.ZSTD, 1, PooledByteBufAllocator.DEFAULT);
        BatchDecoder decoder = new BatchDecoder()) {
      ByteBuf batch = encoder.encode(0, 0, 0, zeros, 0, zeros.length);
      assertThat(batch.getByte(BatchFormat.CODEC)).isEqualTo(BatchFormat.Codec.LZ4.wire());
      assertThat(BatchFormat.withinExpansion(zeros.length, batch.getInt(BatchFormat.DATA_LENGTH)))
          .isTrue();
      List<Integer> lengths = new ArrayList<>();
      decoder.decode(batch, "zeros", (m, a, b) -> true, b -> lengths.add(b.length()));
      assertThat(lengths).containsExactly(zeros.length);
      batch.release();
    }
  }

  @Test
  void aZstdBatchThatDoesNotDecodeOrClaimsTooMuchIsCorruptEvenWithAValidChecksum() {
    BatchEncoder encoder =
        new BatchEncoder(BatchFormat.Codec.ZSTD, 3, PooledByteBufAllocator.DEFAULT);
    ByteBuf chunk = chunkOf(encoder, List.of(compressible(20_000)));
    encoder.close();
    int dataLength = chunk.getInt(BatchFormat.DATA_LENGTH);
    try (BatchDecoder decoder = new BatchDecoder()) {
      ByteBuf damaged = chunk.copy();
      damaged.setByte(
          BatchFormat.HEADER + dataLength / 2,
          damaged.getByte(BatchFormat.HEADER + dataLength / 2) ^ 0x55);
      damaged.setInt(
          BatchFormat.CRC,
          BatchEncoder.checksum(damaged, 0, dataLength, new java.util.zip.CRC32C()));
      assertThatThrownBy(() -> decoder.decode(damaged, "chunk 3", (m, a, b) -> true, b -> {}))
          .isInstanceOfSatisfying(
              FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATA_CORRUPTED))
          .hasMessageContaining("chunk 3");
      damaged.release();

      ByteBuf huge = chunk.copy();
      huge.setInt(BatchFormat.RAW_LENGTH, 255 * dataLength + 65);
      huge.setInt(
          BatchFormat.CRC, BatchEncoder.checksum(huge, 0, dataLength, new java.util.zip.CRC32C()));
      assertThatThrownBy(() -> decoder.decode(huge, "chunk 4", (m, a, b) -> true, b -> {}))
          .isInstanceOfSatisfying(
              FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATA_CORRUPTED))
          .hasMessageContaining("more than any codec expands it");
      huge.release();

      // The decoder goes on with good batches after refusing bad ones.
      List<Integer> lengths = new ArrayList<>();
      decoder.decode(chunk, "chunk 5", (m, a, b) -> true, b -> lengths.add(b.length()));
      assertThat(lengths).containsExactly(20_000);
    }
    chunk.release();
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
