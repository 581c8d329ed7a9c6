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
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads chunks of one disk's partition files with direct I/O, on the disk's own reader
 * threads, so that a fetch never blocks a network event loop on the disk.
 *
 * <p>Memory: a chunk is read into segments from a fixed pool ({@code bufferBytes} in all, in
 * {@link #SEGMENT_BYTES} pieces, allocated on first use and reused). The bytes handed out are a
 * composite of segments that go back to the pool when the answer carrying them is written or
 * dropped. When the pool is empty a read waits for segments to come back, at most {@code
 * waitForBuffers}, then fails with a retryable error: what the worker holds for fetches never
 * grows past the pool, however many reducers ask at once.
 */
public final class DiskReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskReader.class);
  /** Size of one pooled read buffer. */
  public static final int SEGMENT_BYTES = 1 << 20;

  private final String name;
  private final DirectIo io;
  private final ExecutorService threads;
  private final ArrayBlockingQueue<ByteBuffer> free;
  private final int maxSegments;
  private final AtomicInteger allocated = new AtomicInteger();
  private final long waitMillis;

  /**
   * Starts {@code threadCount} reader threads named {@code <name>-N}.
   *
   * @param bufferBytes bytes of read buffers this disk may hold at once; at least one segment
   */
  public DiskReader(String name, DirectIo io, int threadCount, long bufferBytes, long waitForBuffersMillis) {
    this.name = requireNonNull(name, "name is null");
    this.io = requireNonNull(io, "io is null");
    if (threadCount < 1) {
      throw new IllegalArgumentException("threadCount must be positive: " + threadCount);
    }
    this.maxSegments = (int) Math.max(1, Math.min(Integer.MAX_VALUE, bufferBytes / SEGMENT_BYTES));
    this.free = new ArrayBlockingQueue<>(maxSegments);
    this.waitMillis = waitForBuffersMillis;
    this.threads = new ThreadPoolExecutor(threadCount, threadCount, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), new DefaultThreadFactory(name, true));
  }

  /** The most bytes one read can take: a larger chunk can never be read. */
  public long maxReadBytes() {
    // Alignment can add a segment at each end.
    return (long) maxSegments * SEGMENT_BYTES - 2L * io.alignment();
  }

  /** Segments currently lent out (in answers being sent) or being read into. */
  public int segmentsInUse() {
    return allocated.get() - free.size();
  }

  /**
   * Reads {@code length} bytes of {@code file} at {@code offset}, on a reader thread. The future
   * completes with bytes the caller owns (and must release), or fails with a {@link
   * FaroException}: STORAGE_FAILED when the file cannot be read or is shorter than asked,
   * TIMEOUT (retryable) when no read buffer came free in time, SHUTTING_DOWN when closed.
   */
  public CompletableFuture<ByteBuf> read(Path file, long offset, int length) {
    if (length <= 0 || offset < 0) {
      throw new IllegalArgumentException("cannot read " + length + " bytes at " + offset);
    }
    if (length > maxReadBytes()) {
      return CompletableFuture.failedFuture(new FaroException(ErrorCode.STORAGE_FAILED,
          "a chunk of " + length + " bytes of " + file + " is larger than the " + maxReadBytes()
              + " bytes of read buffers of " + name + ": raise faro.worker.io.read.buffer.per.disk"));
    }
    CompletableFuture<ByteBuf> result = new CompletableFuture<>();
    try {
      threads.execute(() -> {
        try {
          result.complete(readNow(file, offset, length));
        } catch (FaroException e) {
          result.completeExceptionally(e);
        } catch (RuntimeException e) {
          result.completeExceptionally(new FaroException(ErrorCode.STORAGE_FAILED,
              "cannot read " + file + ": " + e, e));
        }
      });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new FaroException(ErrorCode.SHUTTING_DOWN, "worker is shutting down"));
    }
    return result;
  }

  private ByteBuf readNow(Path file, long offset, int length) {
    long start = io.alignDown(offset);
    long end = io.alignUp(offset + length);
    List<ByteBuf> segments = new ArrayList<>();
    FileChannel opened;
    try {
      opened = io.openForRead(file);
    } catch (IOException e) {
      throw new FaroException(ErrorCode.STORAGE_FAILED, "cannot open " + file + ": " + e, e);
    }
    try (FileChannel channel = opened) {
      long size = channel.size();
      if (size < offset + length) {
        throw new FaroException(ErrorCode.STORAGE_FAILED, "file " + file + " has " + size
            + " bytes, the chunk asked for ends at " + (offset + length));
      }
      long position = start;
      // Everything up to offset + length must arrive; the read of the last block may stop at the
      // end of the file.
      while (position < offset + length) {
        ByteBuffer segment = acquire(file).clear();
        segments.add(new Segment(segment));
        segment.limit((int) Math.min(segment.capacity(), end - position));
        while (segment.hasRemaining()) {
          int n = channel.read(segment, position + segment.position());
          // A read that ends off a block boundary reached the end of the file.
          if (n <= 0 || segment.position() % io.alignment() != 0) {
            break;
          }
        }
        int got = segment.position();
        segments.get(segments.size() - 1).writerIndex(got);
        position += got;
        if (got < segment.limit() && position < offset + length) {
          throw new FaroException(ErrorCode.STORAGE_FAILED, "file " + file + " ended at " + position
              + " while reading a chunk that ends at " + (offset + length));
        }
      }
    } catch (IOException e) {
      release(segments);
      throw new FaroException(ErrorCode.STORAGE_FAILED, "cannot read " + file + ": " + e, e);
    } catch (RuntimeException e) {
      release(segments);
      throw e;
    }
    CompositeByteBuf chunk = ByteBufAllocator.DEFAULT.compositeDirectBuffer(Math.max(2, segments.size()));
    chunk.addComponents(true, segments);
    return chunk.setIndex((int) (offset - start), (int) (offset - start) + length);
  }

  private ByteBuffer acquire(Path file) {
    ByteBuffer segment = free.poll();
    if (segment != null) {
      return segment;
    }
    while (true) {
      int count = allocated.get();
      if (count >= maxSegments) {
        break;
      }
      if (allocated.compareAndSet(count, count + 1)) {
        return DirectIo.allocateAligned(SEGMENT_BYTES, io.alignment());
      }
    }
    try {
      segment = free.poll(waitMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaroException(ErrorCode.SHUTTING_DOWN, "worker is shutting down");
    }
    if (segment == null) {
      throw new FaroException(ErrorCode.TIMEOUT, "no read buffer of " + name + " came free within "
          + waitMillis + " ms to read " + file + ": the worker is sending as much as "
          + "faro.worker.io.read.buffer.per.disk allows; retry later");
    }
    return segment;
  }

  private static void release(List<ByteBuf> segments) {
    segments.forEach(ByteBuf::release);
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

  /** A pooled segment: back into the pool when released. */
  private final class Segment extends UnpooledDirectByteBuf {
    private final ByteBuffer memory;

    Segment(ByteBuffer memory) {
      super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
      this.memory = memory;
      writerIndex(0);
    }

    @Override
    protected void deallocate() {
      super.deallocate();
      if (!free.offer(memory)) {
        // Cannot happen: the pool holds every segment ever allocated. Let the GC free it.
        allocated.decrementAndGet();
      }
    }
  }
}
