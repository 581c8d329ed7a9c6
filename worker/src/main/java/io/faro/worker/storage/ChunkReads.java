package io.faro.worker.storage;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.FileRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * The reads of one disk's chunks, done on its reader threads: a range of one file (aligned for
 * direct I/O), the pieces of a chunk of a location in runs (reading around them through the page
 * cache), or a chunk larger than the pool into a buffer of its own. Memory comes from {@link
 * ReadBuffers}; when to read is {@link ReadRounds}' decision.
 *
 * <p>Counters: {@link #readBytes()} and {@link #readNanos()} add up, since start, the bytes read
 * from files and the time spent opening and reading them, and nothing else (not the wait in the
 * queue or for buffers, not read-ahead): their ratio is how fast the disk itself serves reads.
 *
 * <p>Thread-safety: every method may be called from any reader thread.
 */
final class ChunkReads {
  /** Where a read around a piece of a run asks for the window after it to be read ahead. */
  interface Ahead {
    /**
     * Queues the read-ahead of {@code length} bytes of {@code run} from {@code offset}, behind
     * every chunk read; {@code covered} is told how many of them were found resident or read.
     */
    void queue(Path run, long offset, long length, LongConsumer covered);
  }

  // Null for a disk read through the page cache.
  private final DirectIo direct;
  private final ReadBuffers buffers;
  private final int alignment;
  private final AtomicLong readBytes = new AtomicLong();
  private final AtomicLong readNanos = new AtomicLong();
  private final AtomicLong regionBytes = new AtomicLong();

  // Reads of runs: how far to read from a piece's start, and, per run, the range last read so.
  private final int readAroundBytes;
  private final ReadAround around = new ReadAround();
  private final Ahead ahead;
  private final AtomicLong aroundBytes = new AtomicLong();
  private final AtomicLong aroundReads = new AtomicLong();

  ChunkReads(DirectIo direct, ReadBuffers buffers, int readAroundBytes, Ahead ahead) {
    this.direct = direct;
    this.buffers = buffers;
    this.alignment = buffers.alignment();
    this.readAroundBytes = readAroundBytes;
    this.ahead = ahead;
  }

  /** Bytes read from files since start (with direct I/O, whole blocks), failed reads' included. */
  long readBytes() {
    return readBytes.get();
  }

  /** Nanoseconds spent opening files and reading {@link #readBytes()} from them since start. */
  long readNanos() {
    return readNanos.get();
  }

  /** Bytes read around pieces of runs since start, beyond the pieces themselves. */
  long aroundBytes() {
    return aroundBytes.get();
  }

  /** Reads of runs that read around their piece, since start. */
  long aroundReads() {
    return aroundReads.get();
  }

  /** Whether a read of pieces reads around them ({@code readAroundBytes} above 0). */
  boolean readsAround() {
    return readAroundBytes > 0;
  }

  /**
   * The {@code length} bytes of {@code file} at {@code offset} as a region of the file, to be sent
   * with sendfile, when every page of them is in the page cache (mincore); null when one is not, on
   * a disk with direct I/O (its files are not in the page cache), or when the file cannot be opened
   * (the buffered read then says why). The region owns the file channel it opened.
   */
  FileRegion residentRegion(Path file, long offset, int length) {
    if (direct != null) {
      return null;
    }
    FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.READ);
    } catch (IOException e) {
      return null;
    }
    boolean handedOver = false;
    try {
      PartitionFile.requireBytesUpTo(channel, file, offset + length, "the chunk asked for");
      if (!WarmUps.resident(channel, offset, length)) {
        return null;
      }
      handedOver = true;
      regionBytes.addAndGet(length);
      return new DefaultFileRegion(channel, offset, length);
    } catch (IOException | RuntimeException e) {
      return null;
    } finally {
      if (!handedOver) {
        try {
          channel.close();
        } catch (IOException ignored) {
          // Only read from.
        }
      }
    }
  }

  /** Bytes handed out as regions of files found in the page cache, since start. */
  long regionBytes() {
    return regionBytes.get();
  }

  /** Reads {@code length} bytes of {@code file} at {@code offset} into reserved segments. */
  ByteBuf range(Path file, long offset, int length) {
    long start = alignDown(offset);
    long end = alignUp(offset + length);
    int needed = (int) ((end - start + ReadBuffers.SEGMENT_BYTES - 1) / ReadBuffers.SEGMENT_BYTES);
    buffers.reserve(needed, file);
    // From here every segment is either in `segments` (released on failure, or handed out in
    // the answer) or still reserved and given back below.
    List<ByteBuf> segments = new ArrayList<>(needed);
    try {
      readInto(file, offset, length, start, end, segments);
    } catch (Throwable t) {
      segments.forEach(ByteBuf::release);
      buffers.unreserve(needed - segments.size());
      throw t;
    }
    // A read that ended early (it cannot, past the size check, but a file may shrink) leaves
    // reserved segments unused.
    buffers.unreserve(needed - segments.size());
    CompositeByteBuf chunk =
        ByteBufAllocator.DEFAULT.compositeDirectBuffer(Math.max(2, segments.size()));
    chunk.addComponents(true, segments);
    return chunk.setIndex((int) (offset - start), (int) (offset - start) + length);
  }

  private void readInto(
      Path file, long offset, int length, long start, long end, List<ByteBuf> segments) {
    // Only the calls on the file count, not taking memory for the segments.
    long bytes = 0;
    long nanos = 0;
    long opening = System.nanoTime();
    FileChannel opened;
    try {
      opened = open(file);
    } catch (IOException e) {
      readNanos.addAndGet(System.nanoTime() - opening);
      throw new FaroException(ErrorCode.STORAGE_FAILED, "cannot open " + file + ": " + e, e);
    }
    try (FileChannel channel = opened) {
      PartitionFile.requireBytesUpTo(channel, file, offset + length, "the chunk asked for");
      nanos += System.nanoTime() - opening;
      long position = start;
      // Everything up to offset + length must arrive; the read of the last block may stop at the
      // end of the file.
      while (position < offset + length) {
        ReadBuffers.Segment segment = buffers.segment();
        segments.add(segment);
        ByteBuffer memory = segment.memory();
        memory.limit((int) Math.min(memory.capacity(), end - position));
        while (memory.hasRemaining()) {
          long before = System.nanoTime();
          int n = channel.read(memory, position + memory.position());
          nanos += System.nanoTime() - before;
          if (n > 0) {
            bytes += n;
          }
          // The end of the file: nothing read, or, with direct I/O, a read that ends off a block
          // boundary. (Through the page cache a short read ends nothing: read on.)
          if (n <= 0 || memory.position() % alignment != 0) {
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
    } finally {
      readBytes.addAndGet(bytes);
      readNanos.addAndGet(nanos);
    }
  }

  /** Reads {@code pieces} ({@code length} bytes in all) through the page cache, in order. */
  ByteBuf pieces(List<Extent> pieces, int length) {
    int needed = (length + ReadBuffers.SEGMENT_BYTES - 1) / ReadBuffers.SEGMENT_BYTES;
    buffers.reserve(needed, pieces.get(0).file());
    List<ByteBuf> segments = new ArrayList<>(needed);
    try {
      for (int i = 0; i < needed; i++) {
        ByteBuf segment = buffers.segment();
        segments.add(segment);
        segment.writerIndex(
            Math.min(ReadBuffers.SEGMENT_BYTES, length - i * ReadBuffers.SEGMENT_BYTES));
      }
    } catch (Throwable t) {
      segments.forEach(ByteBuf::release);
      buffers.unreserve(needed - segments.size());
      throw t;
    }
    CompositeByteBuf chunk =
        ByteBufAllocator.DEFAULT.compositeDirectBuffer(Math.max(2, segments.size()));
    chunk.addComponents(true, segments);
    try {
      chunk.writerIndex(0);
      for (Extent piece : pieces) {
        readPiece(piece, chunk);
      }
      if (chunk.writerIndex() != length) {
        throw new IllegalStateException("read " + chunk.writerIndex() + " of " + length + " bytes");
      }
      return chunk;
    } catch (Throwable t) {
      chunk.release();
      throw t;
    }
  }

  /** Appends the bytes of {@code piece} to {@code chunk}, reading around it when it is due. */
  private void readPiece(Extent piece, CompositeByteBuf chunk) {
    long start = System.nanoTime();
    long bytes = 0;
    try (FileChannel channel = FileChannel.open(piece.file(), StandardOpenOption.READ)) {
      PartitionFile.requireBytesUpTo(channel, piece.file(), piece.end(), "the piece asked for");
      if (readAroundBytes > piece.length() && !around.holds(piece)) {
        readAround(piece, channel, chunk);
        return;
      }
      long position = piece.offset();
      while (position < piece.end()) {
        int n = chunk.writeBytes(channel, position, (int) (piece.end() - position));
        if (n <= 0) {
          throw shortFile(piece, position);
        }
        position += n;
        bytes += n;
      }
    } catch (IOException e) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED, "cannot read " + piece.file() + ": " + e, e);
    } finally {
      readBytes.addAndGet(bytes);
      readNanos.addAndGet(System.nanoTime() - start);
    }
  }

  /**
   * Reads the {@code readAroundBytes} from {@code piece}'s start in one read (reducers fetch in
   * partition order, and a run holds its locations in partition order, so the next reducers' pieces
   * of the run are then in the page cache), appends the piece's bytes to {@code chunk}, and asks
   * for the window after to be read ahead. Counts the bytes it read itself.
   */
  private void readAround(Extent piece, FileChannel channel, CompositeByteBuf chunk)
      throws IOException {
    ByteBuffer window = around.window(readAroundBytes);
    window.clear().limit((int) Math.min(readAroundBytes, channel.size() - piece.offset()));
    while (window.hasRemaining()) {
      int n = channel.read(window, piece.offset() + window.position());
      if (n <= 0) {
        break;
      }
    }
    readBytes.addAndGet(window.position());
    aroundReads.incrementAndGet();
    aroundBytes.addAndGet(window.position() - piece.length());
    if (window.position() < piece.length()) {
      throw shortFile(piece, piece.offset() + window.position());
    }
    long end = piece.offset() + window.position();
    around.read(piece.file(), piece.offset(), end);
    if (window.position() == readAroundBytes) {
      // Behind every chunk read: by the time reducers get there it is in the page cache, and the
      // range this reader holds of the run grows to include it.
      Path run = piece.file();
      long from = piece.offset();
      ahead.queue(
          run, end, readAroundBytes, covered -> around.extend(run, from, end, end + covered));
    }
    chunk.writeBytes(window.flip().limit((int) piece.length()));
  }

  private static FaroException shortFile(Extent piece, long at) {
    return new FaroException(
        ErrorCode.STORAGE_FAILED,
        "file "
            + piece.file()
            + " ended at "
            + at
            + " while reading a piece that ends at "
            + piece.end());
  }

  /**
   * Reads {@code pieces}, {@code length} bytes in all, in reads of at most a segment through the
   * page cache, into one buffer of its own outside the pool (see {@link ReadBuffers#large}).
   */
  ByteBuf large(List<Extent> pieces, int length) {
    ByteBuf chunk = buffers.large(length, pieces.get(0).file());
    long bytes = 0;
    long nanos = 0;
    try {
      for (Extent piece : pieces) {
        long opening = System.nanoTime();
        try (FileChannel channel = FileChannel.open(piece.file(), StandardOpenOption.READ)) {
          PartitionFile.requireBytesUpTo(channel, piece.file(), piece.end(), "the chunk asked for");
          nanos += System.nanoTime() - opening;
          long position = piece.offset();
          while (position < piece.end()) {
            long before = System.nanoTime();
            int n =
                chunk.writeBytes(
                    channel,
                    position,
                    (int) Math.min(ReadBuffers.SEGMENT_BYTES, piece.end() - position));
            nanos += System.nanoTime() - before;
            if (n <= 0) {
              throw new FaroException(
                  ErrorCode.STORAGE_FAILED,
                  "file " + piece.file() + " ended at " + position + " while reading a chunk");
            }
            position += n;
            bytes += n;
          }
        }
      }
      return chunk;
    } catch (IOException e) {
      chunk.release();
      throw new FaroException(
          ErrorCode.STORAGE_FAILED, "cannot read " + pieces.get(0).file() + ": " + e, e);
    } catch (Throwable t) {
      chunk.release();
      throw t;
    } finally {
      readBytes.addAndGet(bytes);
      readNanos.addAndGet(nanos);
    }
  }

  private FileChannel open(Path file) throws IOException {
    return direct != null
        ? direct.openForRead(file)
        : FileChannel.open(file, StandardOpenOption.READ);
  }

  private long alignDown(long position) {
    return position & -(long) alignment;
  }

  private long alignUp(long position) {
    return alignDown(position + alignment - 1);
  }
}
