package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The memory one disk reads chunks into: a fixed pool of segments ({@code bufferBytes} in all, in
 * {@link #SEGMENT_BYTES} pieces of direct memory, allocated on first use and reused; aligned for
 * direct I/O), and one buffer of its own at a time for a chunk larger than the pool.
 *
 * <p>A read reserves every segment it needs at once, before it reads (so reads never hold part of
 * the pool while waiting for the rest, and cannot starve each other into a standstill), waiting at
 * most {@code waitForBuffers}, then fails with a retryable error: what the worker holds for fetches
 * never grows past the pool, however many reducers ask at once. The bytes a read hands out are
 * segments that go back to the pool, and end their reservation, when the answer carrying them is
 * written or dropped.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
final class ReadBuffers {
  /** Size of one pooled read buffer. */
  static final int SEGMENT_BYTES = 1 << 20;

  private final String name;
  // Null for a disk read through the page cache.
  private final DirectIo direct;
  // The file system's block size with direct I/O, else 1.
  private final int alignment;
  private final int maxSegments;
  private final long waitMillis;

  /** Segments not reserved by any read; fair, so that a large read is not overtaken forever. */
  private final Semaphore unreserved;

  /**
   * The one buffer of a chunk larger than the pool: released when its answer is sent or dropped.
   */
  private final Semaphore large = new Semaphore(1, true);

  private final ConcurrentLinkedQueue<ByteBuffer> free = new ConcurrentLinkedQueue<>();

  ReadBuffers(String name, DirectIo direct, long bufferBytes, long waitForBuffersMillis) {
    this.name = requireNonNull(name, "name is null");
    this.direct = direct;
    this.alignment = direct == null ? 1 : direct.alignment();
    this.maxSegments = (int) Math.max(1, Math.min(Integer.MAX_VALUE, bufferBytes / SEGMENT_BYTES));
    this.unreserved = new Semaphore(maxSegments, true);
    this.waitMillis = waitForBuffersMillis;
  }

  /** Where reads start, end and sit in memory: multiples of this (1 through the page cache). */
  int alignment() {
    return alignment;
  }

  /** The most bytes one pooled read can take. */
  long maxReadBytes() {
    // Alignment can add a block at each end.
    return (long) maxSegments * SEGMENT_BYTES - 2L * alignment;
  }

  /** Segments reserved by reads in progress or lent out in answers being sent. */
  int inUse() {
    return maxSegments - unreserved.availablePermits();
  }

  /** Whether a read waits for segments. */
  boolean readWaiting() {
    return unreserved.hasQueuedThreads();
  }

  /**
   * Reserves {@code segments} at once for a read of {@code file}, waiting at most the configured
   * time; TIMEOUT (retryable) if they did not come free.
   */
  void reserve(int segments, Path file) {
    boolean reserved;
    try {
      reserved = unreserved.tryAcquire(segments, waitMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      // Not set again: only close stops a reader thread, and the reads after this one must not
      // all fail for one interrupt.
      throw new FaroException(ErrorCode.SHUTTING_DOWN, "worker is shutting down");
    }
    if (!reserved) {
      throw new FaroException(
          ErrorCode.TIMEOUT,
          "no read buffers of "
              + name
              + " came free within "
              + waitMillis
              + " ms to read "
              + file
              + ": the worker is sending as much as "
              + "faro.worker.io.read.buffer.per.disk allows; retry later");
    }
  }

  /** Ends the reservation of {@code segments} reserved and not made into segments. */
  void unreserve(int segments) {
    unreserved.release(segments);
  }

  /** Reserves one segment if one is free and no read waits for one, without waiting. */
  boolean tryReserveOne() {
    try {
      // Unlike tryAcquire(), a timed one honours the fair semaphore's queue.
      return unreserved.tryAcquire(0, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      return false; // only close stops a reader thread (see #reserve)
    }
  }

  /** A reserved segment, empty: its memory and its reservation come back when it is released. */
  Segment segment() {
    return new Segment(take().clear());
  }

  /** A reserved segment's memory, to use and hand back with {@link #giveBack}. */
  ByteBuffer take() {
    ByteBuffer memory = free.poll();
    if (memory != null) {
      return memory;
    }
    return direct != null
        ? DirectIo.allocateAligned(SEGMENT_BYTES, alignment)
        : ByteBuffer.allocateDirect(SEGMENT_BYTES);
  }

  /** Returns memory from {@link #take} to the pool and ends its reservation. */
  void giveBack(ByteBuffer memory) {
    free.offer(memory);
    unreserved.release();
  }

  /**
   * A buffer of {@code length} bytes of its own for a chunk of {@code file} larger than the pool,
   * once the previous one was sent or dropped (waiting as long as for segments, then TIMEOUT).
   */
  ByteBuf large(int length, Path file) {
    boolean taken;
    try {
      taken = large.tryAcquire(waitMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      throw new FaroException(ErrorCode.SHUTTING_DOWN, "worker is shutting down");
    }
    if (!taken) {
      throw new FaroException(
          ErrorCode.TIMEOUT,
          name
              + " is sending another chunk larger than its read buffers; this one of "
              + file
              + " waited "
              + waitMillis
              + " ms: retry later");
    }
    try {
      return new LargeBuffer(length);
    } catch (Throwable t) {
      large.release();
      throw t;
    }
  }

  /** The buffer of a large read: its permit goes back once it is released. */
  private final class LargeBuffer extends UnpooledDirectByteBuf {
    LargeBuffer(int length) {
      super(UnpooledByteBufAllocator.DEFAULT, length, length);
    }

    @Override
    protected void deallocate() {
      super.deallocate();
      large.release();
    }
  }

  /** A reserved segment: its memory goes back to the pool, and its reservation ends, on release. */
  final class Segment extends UnpooledDirectByteBuf {
    private final ByteBuffer memory;

    Segment(ByteBuffer memory) {
      // Netty slices the buffer and never frees it (doNotFree): deallocate hands it back here.
      super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
      this.memory = memory;
      writerIndex(0);
    }

    /** The memory to read into directly; {@link #writerIndex} then says how much was read. */
    ByteBuffer memory() {
      return memory;
    }

    @Override
    protected void deallocate() {
      super.deallocate();
      giveBack(memory);
    }
  }
}
