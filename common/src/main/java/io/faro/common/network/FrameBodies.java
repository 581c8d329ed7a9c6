package io.faro.common.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.util.ArrayDeque;

/**
 * Builds a frame's body out of the buffers {@link FrameDecoder} received: a slice where that pins
 * little, else a copy; and, for a body spread over several received buffers, one buffer or a
 * composite as the decoder's {@link FrameDecoder.Bodies} asks. Holds no state: the decoder owns the
 * queue and accounts for what was taken from it.
 */
final class FrameBodies {
  /** A body's slice of a received buffer pins at most this many times its own bytes. */
  static final int PIN_RATIO = 4;

  private FrameBodies() {}

  /**
   * The next {@code length} bytes of {@code received}, which holds them and more than its head
   * buffer does, as a buffer the caller owns. Polls and releases each buffer it empties; on a
   * failure, what it built so far is released and the queue keeps what it did not take.
   */
  static ByteBuf gather(
      ByteBufAllocator alloc,
      ArrayDeque<ByteBuf> received,
      int length,
      FrameDecoder.Bodies bodies) {
    ByteBuf body =
        bodies == FrameDecoder.Bodies.CONTIGUOUS
            ? alloc.directBuffer(length, length)
            : alloc.compositeDirectBuffer(Integer.MAX_VALUE);
    try {
      int left = length;
      while (left > 0) {
        ByteBuf b = received.peekFirst();
        int n = Math.min(left, b.readableBytes());
        if (body instanceof CompositeByteBuf composite) {
          composite.addComponent(true, sliceOrCopy(alloc, b, n));
        } else {
          body.writeBytes(b, n);
        }
        left -= n;
        if (!b.isReadable()) {
          received.pollFirst().release();
        }
      }
      return body;
    } catch (RuntimeException | Error e) {
      body.release();
      throw e;
    }
  }

  /**
   * The next {@code n} bytes of {@code b}: a retained slice (no copy) when they fill at least a
   * quarter of {@code b}'s capacity, else a copy of exactly their size. A slice keeps its whole
   * receive buffer alive, and memory budgets count a body by its bytes: a peer sending small frames
   * in large receive buffers would otherwise pin up to 16 times what is counted (64 KiB buffers, 4
   * KiB reads). With the rule, what a body pins is at most four times its bytes; bulk pushes fill
   * their receive buffers and are never copied.
   */
  static ByteBuf sliceOrCopy(ByteBufAllocator alloc, ByteBuf b, int n) {
    if ((long) n * PIN_RATIO >= b.capacity()) {
      return b.readRetainedSlice(n);
    }
    ByteBuf copy = alloc.directBuffer(n, n);
    try {
      copy.writeBytes(b, n);
      return copy;
    } catch (RuntimeException | Error e) {
      copy.release();
      throw e;
    }
  }
}
