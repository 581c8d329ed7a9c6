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
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads chunks of one disk's partition files on the disk's own reader threads, so that a fetch
 * never blocks a network event loop on the disk: with direct I/O on a disk that does it, with
 * positional reads through the page cache on a disk written through it.
 *
 * <p>Order: reads are served in rounds, in file-offset order (the elevator of Flink's sort-merge
 * read scheduler). Reducers fetch their chunks concurrently, so in arrival order a disk would jump
 * between files and back and forth within them; sorted, it sweeps forward through one file after
 * another, and on an HDD most seeks become short ones. A round takes every read queued when it
 * starts and sorts them by file and offset; the reader threads take its reads in that order, and
 * reads that arrive meanwhile wait for the next round, so a read waits for at most one round before
 * its own, however many reads with smaller offsets keep arriving. With one reader thread (an HDD) a
 * round is served strictly in order; with several (flash), they take its reads in order and serve
 * them side by side.
 *
 * <p>Memory: a chunk is read into segments from a fixed pool ({@code bufferBytes} in all, in {@link
 * #SEGMENT_BYTES} pieces of direct memory, allocated on first use and reused; aligned for direct
 * I/O). The bytes handed out are a composite of segments that go back to the pool when the answer
 * carrying them is written or dropped. A read reserves every segment it needs at once, before it
 * reads (so reads never hold part of the pool while waiting for the rest, and cannot starve each
 * other into a standstill), waiting at most {@code waitForBuffers}, then fails with a retryable
 * error: what the worker holds for fetches never grows past the pool, however many reducers ask at
 * once.
 *
 * <p>Read-ahead ({@link #warm}): on a disk read through the page cache, a file that reducers will
 * soon fetch can be brought into the page cache ahead of them, when the reader threads have no
 * chunk read to serve. Reducers fetch a partition only when their task starts and then spend time
 * on its records, so without it the disk idles while they compute and they wait while it reads;
 * with it, the disk's time overlaps theirs. A warm-up skips a file whose pages are all resident
 * (asked of the kernel through a mapping), else reads it through one segment of the pool, taken
 * only when one is free and no read waits for one, in reads as large as a chunk read's. A thread
 * takes a warm-up only when no chunk read is queued, and stops it after the segment during which a
 * chunk read came to wait (for a thread or for buffers), so a fetch waits for one segment's read at
 * most; with several threads, a warm-up may run beside the chunk reads other threads serve. Only
 * the latest {@link #MAX_QUEUED_WARMS} warm-ups wait. (Loading the mapping instead would read most
 * of the file in page faults, in requests of the read-ahead window's size: many more of them on a
 * disk priced in requests.)
 *
 * <p>Counters: {@link #readBytes()} and {@link #readNanos()} add up, since start, the bytes read
 * from files and the time spent opening and reading them, and nothing else (not the wait in the
 * queue or for buffers, not read-ahead): their ratio is how fast the disk itself serves reads.
 *
 * <p>Thread-safety: every method may be called from any thread; only {@link #close()} waits (for
 * the reads queued before it).
 *
 * <p>Over 500 lines, knowingly: the round scheduler (and the read-ahead that waits behind it), the
 * segment pool and the reads (aligned, buffered, or of pieces of runs) share one lock-and-permit
 * discipline (a read reserves its segments on a reader thread, its bytes return them); split, that
 * discipline would span classes. What a reader last read of each run is kept apart ({@link
 * ReadAround}).
 */
public final class DiskReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskReader.class);

  /** Size of one pooled read buffer. */
  public static final int SEGMENT_BYTES = 1 << 20;

  /** Warm-ups kept waiting at most; a newer one pushes out the oldest, by now the least useful. */
  static final int MAX_QUEUED_WARMS = 256;

  /** The order in which a round serves its reads; a stable sort keeps ties in arrival order. */
  private static final Comparator<QueuedRead> FILE_ORDER =
      Comparator.comparing((QueuedRead r) -> r.file).thenComparingLong(r -> r.offset);

  private final String name;
  // Null for a disk read through the page cache.
  private final DirectIo direct;
  // The file system's block size with direct I/O, else 1: reads start, end and sit in memory at
  // multiples of it.
  private final int alignment;
  private final List<Thread> threads = new ArrayList<>();

  private final Object lock = new Object();
  // @GuardedBy("lock"): reads waiting for the next round, in arrival order.
  private final List<QueuedRead> queued = new ArrayList<>();
  // @GuardedBy("lock"): the reads of the current round not taken by a thread yet, in file order.
  private final ArrayDeque<QueuedRead> round = new ArrayDeque<>();
  // @GuardedBy("lock"): warm-ups waiting for the reader threads to have nothing else to do.
  private final ArrayDeque<Warm> warms = new ArrayDeque<>();
  // Written under lock; read without it by a warm-up, to stop early.
  private volatile boolean closed;

  /** Segments not reserved by any read; fair, so that a large read is not overtaken forever. */
  private final Semaphore unreserved;

  /**
   * A chunk larger than the pool (one huge pushed part) is read into a buffer of its own, one at a
   * time per disk: released when its answer is sent or dropped.
   */
  private final Semaphore large = new Semaphore(1, true);

  private final ConcurrentLinkedQueue<ByteBuffer> free = new ConcurrentLinkedQueue<>();
  private final int maxSegments;
  private final long waitMillis;
  private final AtomicLong readBytes = new AtomicLong();
  private final AtomicLong readNanos = new AtomicLong();
  private final AtomicLong warmedBytes = new AtomicLong();
  private final AtomicLong warmResidentBytes = new AtomicLong();
  private final AtomicLong warmNanos = new AtomicLong();

  // Reads of runs: how far to read from a piece's start, and, per run, the range last read so.
  private final int readAroundBytes;
  private final ReadAround around = new ReadAround();
  private final AtomicLong aroundBytes = new AtomicLong();
  private final AtomicLong aroundReads = new AtomicLong();

  /**
   * Starts {@code threadCount} reader threads named {@code <name>-N}.
   *
   * @param direct direct I/O for this disk, or null for a disk read through the page cache
   * @param bufferBytes bytes of read buffers this disk may hold at once; at least one segment
   * @param waitForBuffersMillis how long a read waits for its buffers before it fails
   */
  public DiskReader(
      String name, DirectIo direct, int threadCount, long bufferBytes, long waitForBuffersMillis) {
    this(name, direct, threadCount, bufferBytes, waitForBuffersMillis, 0);
  }

  /**
   * As {@link #DiskReader(String, DirectIo, int, long, long)}, for a disk of runs: a read of a
   * piece of a run that starts past what this reader last read of that run reads {@code
   * readAroundBytes} from the piece's start (see {@link #read(List, BooleanSupplier)}).
   */
  public DiskReader(
      String name,
      DirectIo direct,
      int threadCount,
      long bufferBytes,
      long waitForBuffersMillis,
      int readAroundBytes) {
    if (readAroundBytes < 0 || (readAroundBytes > 0 && direct != null)) {
      throw new IllegalArgumentException(
          "read-around needs the page cache and a size of at least 0: " + readAroundBytes);
    }
    this.readAroundBytes = readAroundBytes;
    this.name = requireNonNull(name, "name is null");
    this.direct = direct;
    this.alignment = direct == null ? 1 : direct.alignment();
    if (threadCount < 1) {
      throw new IllegalArgumentException("threadCount must be positive: " + threadCount);
    }
    this.maxSegments = (int) Math.max(1, Math.min(Integer.MAX_VALUE, bufferBytes / SEGMENT_BYTES));
    this.unreserved = new Semaphore(maxSegments, true);
    this.waitMillis = waitForBuffersMillis;
    DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
    for (int i = 0; i < threadCount; i++) {
      Thread thread = factory.newThread(this::serve);
      threads.add(thread);
      thread.start();
    }
  }

  /** The most bytes one read can take; a larger chunk must be served another way. */
  public long maxReadBytes() {
    // Alignment can add a block at each end.
    return (long) maxSegments * SEGMENT_BYTES - 2L * alignment;
  }

  /** Segments reserved by reads in progress or lent out in answers being sent. */
  public int segmentsInUse() {
    return maxSegments - unreserved.availablePermits();
  }

  /** Reads waiting for their turn: queued for the next round, or not yet taken in this one. */
  public int queuedReads() {
    synchronized (lock) {
      return queued.size() + round.size();
    }
  }

  /**
   * Bytes read from files since start (with direct I/O, whole blocks: a little more than the chunks
   * asked for), including those of reads that failed part way.
   */
  public long readBytes() {
    return readBytes.get();
  }

  /** Nanoseconds spent opening files and reading {@link #readBytes()} from them since start. */
  public long readNanos() {
    return readNanos.get();
  }

  /** Bytes that read-ahead found outside the page cache and loaded, since start. */
  public long warmedBytes() {
    return warmedBytes.get();
  }

  /** Bytes that read-ahead found in the page cache already (nothing to do), since start. */
  public long warmResidentBytes() {
    return warmResidentBytes.get();
  }

  /** Nanoseconds spent on read-ahead since start (checking and loading). */
  public long warmNanos() {
    return warmNanos.get();
  }

  /** Whether {@link #warm} does anything here: only on a disk read through the page cache. */
  public boolean readsThroughPageCache() {
    return direct == null;
  }

  /**
   * Queues the read-ahead of the first {@code length} bytes of {@code file} (see the class
   * comment); never blocks. The future completes once done: true when the bytes were loaded or
   * found resident, false when nothing was done (a disk with direct I/O, a warm-up pushed out of
   * the queue or queued at close, a file that cannot be read: read-ahead is only a saving, its
   * failures are the chunk read's to report).
   */
  public CompletableFuture<Boolean> warm(Path file, long length) {
    return warm(file, length, true);
  }

  /**
   * As {@link #warm(Path, long)}; {@code checkResident} false reads the file whether it is resident
   * or not (for tests, whose files are always resident).
   */
  CompletableFuture<Boolean> warm(Path file, long length, boolean checkResident) {
    return warm(file, 0, length, checkResident);
  }

  /** As {@link #warm(Path, long, boolean)}, for the {@code length} bytes from {@code offset}. */
  CompletableFuture<Boolean> warm(Path file, long offset, long length, boolean checkResident) {
    return queue(new Warm(requireNonNull(file, "file is null"), offset, length, checkResident));
  }

  private CompletableFuture<Boolean> queue(Warm warm) {
    if (direct != null || warm.length <= 0) {
      warm.done.complete(false);
      return warm.done;
    }
    Warm dropped;
    synchronized (lock) {
      if (closed) {
        dropped = warm;
      } else {
        warms.addLast(warm);
        dropped = warms.size() > MAX_QUEUED_WARMS ? warms.pollFirst() : null;
        lock.notify();
      }
    }
    if (dropped != null) {
      dropped.done.complete(false);
    }
    return warm.done;
  }

  /**
   * Queues a read of {@code length} bytes of {@code file} at {@code offset}, served by a reader
   * thread in its round (see the class comment); never blocks. The future completes with bytes the
   * caller owns (and must release), or fails with a {@link FaroException}: STORAGE_FAILED when the
   * file cannot be read or is shorter than asked, TIMEOUT (retryable) when no read buffers came
   * free in time, SHUTTING_DOWN when closed, CONNECTION_FAILED when {@code stillWanted} says no
   * when the read's turn comes (the asker went away: its read is skipped).
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
    return enqueue(new QueuedRead(file, offset, length, stillWanted, null));
  }

  private CompletableFuture<ByteBuf> enqueue(QueuedRead read) {
    synchronized (lock) {
      if (closed) {
        read.result.completeExceptionally(
            new FaroException(ErrorCode.SHUTTING_DOWN, "worker is shutting down"));
        return read.result;
      }
      queued.add(read);
      // One idle thread is enough for one read; a thread that starts a round wakes the others.
      lock.notify();
    }
    return read.result;
  }

  /**
   * As {@link #read(Path, long, int, BooleanSupplier)}, for data that lies in several pieces of
   * files (a chunk of a location in runs): the bytes of {@code pieces}, in order, as one buffer.
   *
   * <p>On a disk of runs, a piece that starts outside the range this reader last read around in its
   * run is read with the {@code readAroundBytes} after its start, in one read through the page
   * cache: reducers fetch in partition order, and a run holds its locations in partition order, so
   * the next reducers' pieces of that run are then in the page cache, and the disk reads each run
   * forward in large requests instead of one small one per location and run. A piece inside that
   * range is read alone (from the page cache, unless it was evicted meanwhile).
   */
  public CompletableFuture<ByteBuf> read(List<Extent> pieces, BooleanSupplier stillWanted) {
    if (pieces.isEmpty()) {
      throw new IllegalArgumentException("no pieces to read with " + name);
    }
    // One piece on a disk that reads nothing around (a file of its own): a plain range read.
    if (pieces.size() == 1 && readAroundBytes == 0) {
      Extent only = pieces.get(0);
      return read(
          only.file(),
          only.offset(),
          (int) Math.min(Integer.MAX_VALUE, only.length()),
          stillWanted);
    }
    long total = 0;
    for (Extent piece : pieces) {
      if (piece.length() <= 0) {
        throw new IllegalArgumentException("an empty piece of " + piece.file() + " to read");
      }
      total += piece.length();
    }
    if (total > maxReadBytes() || direct != null) {
      throw new IllegalArgumentException(
          "cannot read "
              + total
              + " bytes in "
              + pieces.size()
              + " pieces with "
              + name
              + " (at most "
              + maxReadBytes()
              + " bytes per read, through the page cache)");
    }
    Extent first = pieces.get(0);
    QueuedRead read =
        new QueuedRead(first.file(), first.offset(), (int) total, stillWanted, List.copyOf(pieces));
    return enqueue(read);
  }

  /**
   * Reads a chunk larger than {@link #maxReadBytes()} (one huge pushed part, in one file or in
   * pieces of runs): on a reader thread like every read, in its turn, in reads of at most a
   * segment, through the page cache, into one buffer of its own outside the pool. One such buffer
   * per disk at a time: a second large read waits for the first's buffer to be sent or dropped, at
   * most as long as a read waits for segments (then TIMEOUT, retryable). Never on a network thread.
   */
  public CompletableFuture<ByteBuf> readLarge(List<Extent> pieces, BooleanSupplier stillWanted) {
    long total = 0;
    for (Extent piece : pieces) {
      if (piece.length() <= 0) {
        throw new IllegalArgumentException("an empty piece of " + piece.file() + " to read");
      }
      total += piece.length();
    }
    if (pieces.isEmpty() || total > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "cannot read " + total + " bytes in " + pieces.size() + " pieces with " + name);
    }
    Extent first = pieces.get(0);
    return enqueue(
        new QueuedRead(
            first.file(), first.offset(), (int) total, stillWanted, List.copyOf(pieces), true));
  }

  /** Reads {@code pieces}, {@code length} bytes in all, into a buffer of their own. */
  private ByteBuf readLargeNow(List<Extent> pieces, int length) {
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
              + pieces.get(0).file()
              + " waited "
              + waitMillis
              + " ms: retry later");
    }
    ByteBuf chunk;
    try {
      chunk = new LargeBuffer(length);
    } catch (Throwable t) {
      large.release();
      throw t;
    }
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
                    channel, position, (int) Math.min(SEGMENT_BYTES, piece.end() - position));
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

  /** Bytes read around pieces of runs since start (see {@link #read(List, BooleanSupplier)}). */
  public long readAroundBytes() {
    return aroundBytes.get();
  }

  /** Reads of runs that read around their piece, since start. */
  public long readsAround() {
    return aroundReads.get();
  }

  /** A reader thread's life: serves reads until the reader is closed and every read is served. */
  private void serve() {
    for (Runnable task = next(); task != null; task = next()) {
      task.run();
    }
  }

  /**
   * The next read to serve: the current round's next one, or the first of a new round when the
   * current one is all taken, or, with no read at all, the oldest warm-up; waits while there is
   * none. Null once closed with no read left (warm-ups queued then are dropped).
   */
  private Runnable next() {
    synchronized (lock) {
      while (round.isEmpty()) {
        if (!queued.isEmpty()) {
          // Under the lock, briefly: a round is at most the fetches in flight on this disk.
          queued.sort(FILE_ORDER);
          round.addAll(queued);
          queued.clear();
          if (round.size() > 1) {
            lock.notifyAll();
          }
        } else if (closed) {
          return null;
        } else if (!warms.isEmpty()) {
          return warms.pollFirst()::serve;
        } else {
          try {
            lock.wait();
          } catch (InterruptedException e) {
            // Only close stops a reader thread, and only once every queued read is served.
          }
        }
      }
      return round.poll()::serve;
    }
  }

  /** Reads {@code pieces} ({@code length} bytes in all) through the page cache, in order. */
  private ByteBuf readPieces(List<Extent> pieces, int length) {
    int needed = (length + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
    Path first = pieces.get(0).file();
    reserve(needed, first);
    List<ByteBuf> segments = new ArrayList<>(needed);
    try {
      for (int i = 0; i < needed; i++) {
        Segment segment = new Segment(take().clear());
        segments.add(segment);
        segment.writerIndex(Math.min(SEGMENT_BYTES, length - i * SEGMENT_BYTES));
      }
    } catch (Throwable t) {
      segments.forEach(ByteBuf::release);
      unreserved.release(needed - segments.size());
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
        ByteBuffer window = around.window(readAroundBytes);
        window.clear().limit((int) Math.min(readAroundBytes, channel.size() - piece.offset()));
        while (window.hasRemaining()) {
          int n = channel.read(window, piece.offset() + window.position());
          if (n <= 0) {
            break;
          }
        }
        bytes += window.position();
        aroundReads.incrementAndGet();
        aroundBytes.addAndGet(window.position() - piece.length());
        if (window.position() < piece.length()) {
          throw shortFile(piece, piece.offset() + window.position());
        }
        long end = piece.offset() + window.position();
        around.read(piece.file(), piece.offset(), end);
        if (window.position() == readAroundBytes) {
          aheadOf(piece.file(), piece.offset(), end);
        }
        chunk.writeBytes(window.flip().limit((int) piece.length()));
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
   * Queues the read of the window after {@code [from, to)} of {@code run} (read around just now),
   * behind every chunk read: by the time reducers get there it is in the page cache, and the range
   * this reader holds of the run grows to include it.
   */
  private void aheadOf(Path run, long from, long to) {
    Warm ahead = new Warm(run, to, readAroundBytes, true);
    ahead.whenCovered = covered -> around.extend(run, from, to, to + covered);
    queue(ahead);
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

  private ByteBuf readNow(Path file, long offset, int length) {
    long start = alignDown(offset);
    long end = alignUp(offset + length);
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
        ByteBuffer memory = take().clear();
        Segment segment = new Segment(memory);
        segments.add(segment);
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

  private void reserve(int segments, Path file) {
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

  /** A reserved segment's memory: a pooled one, or a new one while the pool is not full grown. */
  private ByteBuffer take() {
    ByteBuffer memory = free.poll();
    if (memory != null) {
      return memory;
    }
    return direct != null
        ? DirectIo.allocateAligned(SEGMENT_BYTES, alignment)
        : ByteBuffer.allocateDirect(SEGMENT_BYTES);
  }

  /**
   * Stops taking reads (later ones fail with SHUTTING_DOWN) and stops the reader threads once the
   * reads queued before ran. Lent segments come back as usual.
   */
  @Override
  public void close() {
    List<Warm> dropped;
    synchronized (lock) {
      closed = true;
      dropped = new ArrayList<>(warms);
      warms.clear();
      lock.notifyAll();
    }
    dropped.forEach(w -> w.done.complete(false));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try {
      for (Thread thread : threads) {
        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (threads.stream().anyMatch(Thread::isAlive)) {
      LOG.warn("{}: reads did not finish within 30s", name);
    }
  }

  /** A read waiting for its turn, and the answer its asker waits for. */
  private final class QueuedRead {
    final Path file;
    final long offset;
    final int length;
    final BooleanSupplier stillWanted;
    // The pieces of a read of several (of runs); null for one range of one file.
    final List<Extent> pieces;
    // A chunk larger than the pool, read into a buffer of its own (readLarge).
    final boolean large;
    final CompletableFuture<ByteBuf> result = new CompletableFuture<>();

    QueuedRead(
        Path file, long offset, int length, BooleanSupplier stillWanted, List<Extent> pieces) {
      this(file, offset, length, stillWanted, pieces, false);
    }

    QueuedRead(
        Path file,
        long offset,
        int length,
        BooleanSupplier stillWanted,
        List<Extent> pieces,
        boolean large) {
      this.file = requireNonNull(file, "file is null");
      this.offset = offset;
      this.length = length;
      this.stillWanted = requireNonNull(stillWanted, "stillWanted is null");
      this.pieces = pieces;
      this.large = large;
    }

    /** Reads now, on a reader thread; always completes {@link #result}. */
    void serve() {
      try {
        if (!stillWanted.getAsBoolean()) {
          result.completeExceptionally(
              new FaroException(
                  ErrorCode.CONNECTION_FAILED, "the read of " + file + " is no longer wanted"));
          return;
        }
        assert !io.faro.common.network.NetworkThreads.isCurrent() : "a disk read on an event loop";
        ByteBuf bytes =
            large
                ? readLargeNow(pieces, length)
                : pieces == null ? readNow(file, offset, length) : readPieces(pieces, length);
        if (!result.complete(bytes)) {
          bytes.release(); // completed otherwise meanwhile: nobody else will release them
        }
      } catch (FaroException e) {
        result.completeExceptionally(e);
      } catch (Throwable t) {
        // Errors too (e.g. out of direct memory): the fetch must get an answer.
        result.completeExceptionally(
            new FaroException(ErrorCode.STORAGE_FAILED, "cannot read " + file + ": " + t, t));
      }
    }
  }

  /** Whether a chunk read waits: for a reader thread, or for read buffers. */
  private boolean fetchWaiting() {
    return queuedReads() > 0 || unreserved.hasQueuedThreads();
  }

  /** Reserves one segment if one is free and no read waits for one, without waiting. */
  private boolean tryReserveOne() {
    try {
      // Unlike tryAcquire(), a timed one honours the fair semaphore's queue.
      return unreserved.tryAcquire(0, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      return false; // only close stops a reader thread (see #reserve)
    }
  }

  /** A read-ahead waiting for the reader threads to be idle. */
  private final class Warm {
    final Path file;
    final long offset;
    final long length;
    final boolean checkResident;
    final CompletableFuture<Boolean> done = new CompletableFuture<>();
    // Told, before the counters, how many bytes from the offset were found resident or read.
    java.util.function.LongConsumer whenCovered = covered -> {};

    Warm(Path file, long offset, long length, boolean checkResident) {
      this.file = file;
      this.offset = offset;
      this.length = length;
      this.checkResident = checkResident;
    }

    /**
     * On a reader thread: checks whether the {@code length} bytes from the offset (fewer if the
     * file is shorter) are resident, and reads them through the page cache into one pooled segment,
     * over and over, if not; always completes {@link #done}.
     */
    void serve() {
      long start = System.nanoTime();
      boolean warmed = false;
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
        long bytes = Math.max(0, Math.min(length, channel.size() - offset));
        if (bytes > 0 && checkResident && resident(channel, bytes)) {
          whenCovered.accept(bytes);
          warmResidentBytes.addAndGet(bytes);
          warmed = true;
        } else if (bytes > 0) {
          warmed = readThrough(channel, bytes);
        } else {
          warmed = true;
        }
      } catch (Throwable t) {
        // Gone (the shuffle expired meanwhile), unreadable, or out of direct memory: the chunk
        // read reports it, if any; the reader thread goes on either way.
        LOG.debug("{}: no read-ahead of {}: {}", name, file, t.toString());
      } finally {
        warmNanos.addAndGet(System.nanoTime() - start);
        done.complete(warmed);
      }
    }

    /** Whether every page of the {@code bytes} from the offset is in the page cache (mincore). */
    private boolean resident(FileChannel channel, long bytes) throws IOException {
      MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_ONLY, offset, bytes);
      try {
        return mapped.isLoaded();
      } finally {
        // Unmapped now, not whenever the collector finds the buffer.
        PlatformDependent.freeDirectBuffer(mapped);
      }
    }

    /**
     * Reads the bytes in segment-sized reads, as a fetch would (the kernel reads them in requests
     * as large as the device takes), into a segment of the pool taken only if one is free: a disk
     * whose buffers are all lent out is busy serving fetches, and reads nothing ahead. Stops after
     * the segment during which a chunk read was queued, so that a fetch waits for one segment's
     * read at most.
     */
    private boolean readThrough(FileChannel channel, long bytes) throws IOException {
      // Not ahead of a read that waits for buffers (a plain tryAcquire would barge past it).
      if (fetchWaiting() || !tryReserveOne()) {
        return false;
      }
      ByteBuffer memory = null;
      long position = 0;
      try {
        memory = take();
        while (position < bytes) {
          memory.clear().limit((int) Math.min(memory.capacity(), bytes - position));
          int n = channel.read(memory, offset + position);
          if (n <= 0) {
            break;
          }
          position += n;
          if (fetchWaiting() || closed) {
            break; // a fetch goes first; the rest of this file is read when it is fetched
          }
        }
        whenCovered.accept(position);
        return true;
      } finally {
        warmedBytes.addAndGet(position);
        if (memory != null) {
          free.offer(memory);
        }
        unreserved.release();
      }
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
