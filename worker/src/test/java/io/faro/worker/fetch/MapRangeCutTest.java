package io.faro.worker.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.batch.BatchFormat;
import io.faro.worker.testing.Batches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MapRangeCutTest {
  private final Batches batches = new Batches(true, 11L);

  /** Batches of maps 0..3, interleaved as concurrent maps push them: map m's batch b is m*100+b. */
  private List<byte[]> interleaved() {
    List<byte[]> list = new ArrayList<>();
    for (int b = 0; b < 3; b++) {
      for (int m = 0; m < 4; m++) {
        list.add(batches.batchBytes(m, 0, b, 300 + 50 * m + b));
      }
    }
    return list;
  }

  private static byte[] concat(List<byte[]> parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    parts.forEach(out::writeBytes);
    return out.toByteArray();
  }

  /** A chunk as the disk reader hands it out: a composite of segments, cut at {@code seam}. */
  private static ByteBuf chunk(byte[] bytes, int seam) {
    CompositeByteBuf chunk = Unpooled.compositeBuffer();
    chunk.addComponent(true, Unpooled.wrappedBuffer(bytes, 0, seam));
    chunk.addComponent(true, Unpooled.wrappedBuffer(bytes, seam, bytes.length - seam));
    return chunk;
  }

  private static int mapOf(byte[] batch) {
    return Unpooled.wrappedBuffer(batch).getInt(BatchFormat.MAP_ID);
  }

  @Test
  void keepsOnlyTheBatchesOfTheMapsAskedForInTheirOrder() {
    List<byte[]> all = interleaved();
    byte[] bytes = concat(all);
    // Seams inside a header and inside data: the CRC is checked across segments.
    for (int seam : new int[] {5, bytes.length / 2, bytes.length - 3}) {
      ByteBuf kept = MapRangeCut.keep(chunk(bytes, seam), 1, 3);
      try {
        List<byte[]> expected = all.stream().filter(b -> mapOf(b) >= 1 && mapOf(b) < 3).toList();
        assertThat(ByteBufUtil.getBytes(kept)).isEqualTo(concat(expected));
      } finally {
        kept.release();
      }
    }
  }

  @Test
  void aChunkOfOnlyTheMapsAskedForIsSentAsItIsAndOneOfNoneIsEmpty() {
    byte[] bytes = concat(interleaved());
    ByteBuf chunk = chunk(bytes, 100);
    assertThat(MapRangeCut.keep(chunk, 0, 4)).isSameAs(chunk);
    assertThat(chunk.release()).isTrue();
    ByteBuf none = chunk(bytes, 100);
    ByteBuf kept = MapRangeCut.keep(none, 7, 9);
    assertThat(kept.readableBytes()).isZero();
    kept.release();
    assertThat(none.refCnt()).as("the chunk is released once nothing refers to it").isZero();
  }

  @Test
  void aBatchOfAnotherMapThatFailsItsChecksumIsSentForTheReaderToReport() {
    List<byte[]> all = interleaved();
    // Map 0's first batch, its data damaged: it cannot be told apart from a batch whose map id was
    // damaged, so it is kept; the reader's CRC check then names it.
    byte[] damaged = all.get(0).clone();
    damaged[BatchFormat.HEADER + 7] ^= 0x10;
    all.set(0, damaged);
    ByteBuf kept = MapRangeCut.keep(chunk(concat(all), 64), 2, 3);
    try {
      List<byte[]> expected = new ArrayList<>();
      expected.add(damaged);
      all.stream().filter(b -> mapOf(b) == 2).forEach(expected::add);
      assertThat(ByteBufUtil.getBytes(kept)).isEqualTo(concat(expected));
    } finally {
      kept.release();
    }
  }

  @Test
  void aChunkThatCannotBeWalkedToItsEndIsSentWhole() {
    List<byte[]> all = interleaved();
    byte[] bytes = concat(all);
    // A data length running past the chunk, in the third batch.
    byte[] overlong = bytes.clone();
    int third = all.get(0).length + all.get(1).length;
    Unpooled.wrappedBuffer(overlong).setInt(third + BatchFormat.DATA_LENGTH, bytes.length);
    ByteBuf chunk = chunk(overlong, 10);
    assertThat(MapRangeCut.keep(chunk, 3, 4)).isSameAs(chunk);
    chunk.release();
    // A torn header at the end.
    byte[] torn = java.util.Arrays.copyOf(bytes, bytes.length + BatchFormat.HEADER - 1);
    ByteBuf tornChunk = chunk(torn, 10);
    assertThat(MapRangeCut.keep(tornChunk, 3, 4)).isSameAs(tornChunk);
    tornChunk.release();
  }
}
