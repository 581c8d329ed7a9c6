package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads chunks of one disk's partition files with direct I/O, on the disk's own reader threads, so
 * that a fetch never blocks a network event loop on the disk.
 *
 * <p>Memory: a chunk is read into segments from a fixed pool ({@code bufferBytes} in all, in {@link
 * #SEGMENT_BYTES} pieces, allocated on first use and reused). The bytes handed out are a composite
 * of segments that go back to the pool when the answer carrying them is written or dropped. A read
 * reserves every segment it needs at once, before it reads (so reads never hold part of the pool
 * while waiting for the rest, and cannot starve each other into a standstill), waiting at most
 * {@code waitForBuffers}, then fails with a retryable error: what the worker holds for fetches
 * never grows past the pool, however many reducers ask at once.
 */
public final class DiskReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskReader.class);

  /** Size of one pooled read buffer. */
  public static final int SEGMENT_BYTES = 1 << 20;

  private final String name;
  private final DirectIo io;
  private final ExecutorService threads;

  /** Segments not reserved by any read; fair, so that a large read is not overtaken forever. */
  private final Semaphore unreserved;

  private final ConcurrentLinkedQueue<ByteBuffer> free = new ConcurrentLinkedQueue<>();
  private final int maxSegments;
  private final long waitMillis;

  /**
   * Starts {@code threadCount} reader threads named {@code <name>-N}.
   *
   * @param bufferBytes bytes of read buffers this disk may hold at once; at least one segment
   * @param waitForBuffersMillis how long a read waits for its buffers before it fails
   */
  public DiskReader(
      String name, DirectIo io, int threadCount, long bufferBytes, long waitForBuffersMillis) {
    this.name = requireNonNull(name, "name is null");
    this.io = requireNonNull(io, "io is null");
    if (threadCount < 1) {
      throw new IllegalArgumentException("threadCount must be positive: " + threadCount);
    }
    this.maxSegments = (int) Math.max(1, Math.min(Integer.MAX_VALUE, bufferBytes / SEGMENT_BYTES));
    this.unreserved = new Semaphore(maxSegments, true);
    this.waitMillis = waitForBuffersMillis;
    this.threads =
        new ThreadPoolExecutor(
            threadCount,
            threadCount,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            new DefaultThreadFactory(name, true));
  }

  /** The most bytes one read can take; a larger chunk must be served another way. */
  public long maxReadBytes() {
    // Alignment can add a segment at each end.
    return (long) maxSegments * SEGMENT_BYTES - 2L * io.alignment();
  }

  /** Segments reserved by reads in progress or lent out in answers being sent. */
  public int segmentsInUse() {
    return maxSegments - unreserved.availablePermits();
  }

  /**
   * Reads {@code length} bytes of {@code file} at {@code offset}, on a reader thread. The future
   * completes with bytes the caller owns (and must release), or fails with a {@link FaroException}:
   * STORAGE_FAILED when the file cannot be read or is shorter than asked, TIMEOUT (retryable) when
   * no read buffers came free in time, SHUTTING_DOWN when closed, CONNECTION_FAILED when {@code
   * stillWanted} says no when the read's turn comes (the asker went away: its read is skipped).
   *
   * @throws IllegalArgumentException for a negative offset, an empty read or one larger than {@link
   *     #maxReadBytes()}
   */
  public CompletableFuture<ByteBuf> read(
      Path file, long offset, int length, BooleanSupplier stillWanted) {
    if (length <= 0 || offset < 0 || length > maxReadBytes()) {
      throw new IllegalArgumentException(
          "cannot read "
              + length
              + " bytes at "
              + offset
              + " of "
              + file
              + " with "
              + name
              + " (at most "
              + maxReadBytes()
              + " bytes per read)");
    }
    CompletableFuture<ByteBuf> result = new CompletableFuture<>();
    try {
      threads.execute(
          () -> {
            try {
              if (!stillWanted.getAsBoolean()) {
                result.completeExceptionally(
                    new FaroException(
                        ErrorCode.CONNECTION_FAILED,
                        "the read of " + file + " is no longer wanted"));
                return;
              }
              result.complete(readNow(file, offset, length));
            } catch (FaroException e) {
              result.completeExceptionally(e);
            } catch (Throwable t) {
              // Errors too (e.g. out of direct memory): the fetch must get an answer.
              result.completeExceptionally(
                  new FaroException(ErrorCode.STORAGE_FAILED, "cannot read " + file + ": " + t, t));
            }
          });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(
          new FaroException(ErrorCode.SHUTTING_DOWN, "worker is shutting down"));
    }
    return result;
  }

  private ByteBuf readNow(Path file, long offset, int length) {
    long start = io.alignDown(offset);
    long end = io.alignUp(offset + length);
    int needed = (int) ((end - start + SEGMENT_BYTES - 1) / SEGMENT_BYTES);
    reserve(needed, file);
    // From here every segment is either in `segments` (released on failure, or handed out in
    // the answer) or still reserved and given back below.
    List<ByteBuf> segments = new ArrayList<>(needed);
    try {
      read(file, offset, length, start, end, segments);
    } catch (Throwable t) {
      segments.forEach(ByteBuf::release);
      unreserved.release(needed - segments.size());
      throw t;
    }
    // A read that ended early (it cannot, past the size check, but a file may shrink) leaves
    // reserved segments unused.
    unreserved.release(needed - segments.size());
    CompositeByteBuf chunk =
        ByteBufAllocator.DEFAULT.compositeDirectBuffer(Math.max(2, segments.size()));
    chunk.addComponents(true, segments);
    return chunk.setIndex((int) (offset - start), (int) (offset - start) + length);
  }

  private void read(
      Path file, long offset, int length, long start, long end, List<ByteBuf> segments) {
    FileChannel opened;
    try {
      opened = io.openForRead(file);
    } catch (IOException e) {
      throw new FaroException(ErrorCode.STORAGE_FAILED, "cannot open " + file + ": " + e, e);
    }
    try (FileChannel channel = opened) {
      PartitionFile.requireBytesUpTo(channel, file, offset + length, "the chunk asked for");
      long position = start;
      // Everything up to offset + length must arrive; the read of the last block may stop at the
      // end of the file.
      while (position < offset + length) {
        ByteBuffer memory = take().clear();
        Segment segment = new Segment(memory);
        segments.add(segment);
        memory.limit((int) Math.min(memory.capacity(), end - position));
        while (memory.hasRemaining()) {
          int n = channel.read(memory, position + memory.position());
          // A read that ends off a block boundary reached the end of the file.
          if (n <= 0 || memory.position() % io.alignment() != 0) {
            break;
          }
        }
        int got = memory.position();
        segment.writerIndex(got);
        position += got;
        if (got < memory.limit() && position < offset + length) {
          throw new FaroException(
              ErrorCode.STORAGE_FAILED,
              "file "
                  + file
                  + " ended at "
                  + position
                  + " while reading a chunk that ends at "
                  + (offset + length));
        }
      }
    } catch (IOException e) {
      throw new FaroException(ErrorCode.STORAGE_FAILED, "cannot read " + file + ": " + e, e);
    }
  }

  private void reserve(int segments, Path file) {
    boolean reserved;
    try {
      reserved = unreserved.tryAcquire(segments, waitMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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

  /** A reserved segment's memory: a pooled one, or a new one while the pool is not full grown. */
  private ByteBuffer take() {
    ByteBuffer memory = free.poll();
    return memory != null ? memory : DirectIo.allocateAligned(SEGMENT_BYTES, io.alignment());
  }

  /** Stops the reader threads once the queued reads ran. Lent segments come back as usual. */
  @Override
  public void close() {
    threads.shutdown();
    try {
      if (!threads.awaitTermination(30, TimeUnit.SECONDS)) {
        LOG.warn("{}: reads did not finish within 30s", name);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A reserved segment: its memory goes back to the pool, and its reservation ends, on release. */
  private final class Segment extends UnpooledDirectByteBuf {
    private final ByteBuffer memory;

    Segment(ByteBuffer memory) {
      // Netty slices the buffer and never frees it (doNotFree): deallocate hands it back here.
      super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
      this.memory = memory;
      writerIndex(0);
    }

    @Override
    protected void deallocate() {
      super.deallocate();
      free.offer(memory);
      unreserved.release();
    }
  }
}
