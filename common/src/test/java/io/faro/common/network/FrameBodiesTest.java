package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayDeque;
import org.junit.jupiter.api.Test;

/** A body slices a received buffer only when that pins little, and is gathered across several. */
class FrameBodiesTest {
  private final ByteBufAllocator alloc = new UnpooledByteBufAllocator(true);

  private ByteBuf received(int capacity, int from, int bytes) {
    ByteBuf b = alloc.directBuffer(capacity, capacity);
    for (int i = 0; i < bytes; i++) {
      b.writeByte(from + i);
    }
    return b;
  }

  @Test
  void slicesAQuarterOfTheBufferOrMoreAndCopiesLess() {
    ByteBuf b = received(64, 0, 64);
    ByteBuf slice = FrameBodies.sliceOrCopy(alloc, b, 16);
    assertThat(b.refCnt()).as("16 of 64 bytes: a slice, which retains its buffer").isEqualTo(2);
    ByteBuf copy = FrameBodies.sliceOrCopy(alloc, b, 15);
    assertThat(b.refCnt()).as("15 of 64 bytes: a copy").isEqualTo(2);
    assertThat(copy.capacity()).isEqualTo(15);
    assertThat(copy.getByte(0)).isEqualTo((byte) 16);
    assertThat(b.readerIndex()).isEqualTo(31);
    slice.release();
    copy.release();
    b.release();
  }

  @Test
  void gathersABodyAcrossBuffersAndDropsTheOnesItEmpties() {
    for (FrameDecoder.Bodies bodies : FrameDecoder.Bodies.values()) {
      ArrayDeque<ByteBuf> queue = new ArrayDeque<>();
      ByteBuf first = received(8, 0, 8);
      ByteBuf second = received(8, 8, 8);
      queue.add(first);
      queue.add(second);
      ByteBuf body = FrameBodies.gather(alloc, queue, 12, bodies);
      assertThat(body.readableBytes()).isEqualTo(12);
      for (int i = 0; i < 12; i++) {
        assertThat(body.getByte(i)).isEqualTo((byte) i);
      }
      assertThat(body instanceof CompositeByteBuf)
          .isEqualTo(bodies == FrameDecoder.Bodies.COMPOSITE);
      body.release();
      assertThat(first.refCnt()).as("emptied and released").isZero();
      assertThat(queue).containsExactly(second);
      assertThat(second.readableBytes()).isEqualTo(4);
      second.release();
    }
  }
}
