package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.NetworkThreads;
import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import io.netty.util.ReferenceCounted;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;

/**
 * Reads chunks of one disk's partition files on the disk's own reader threads, so that a fetch
 * never blocks a network event loop on the disk: with direct I/O on a disk that does it, with
 * positional reads through the page cache on a disk written through it. Every chunk a worker serves
 * is read here, whatever its size or transport.
 *
 * <p>The parts, one job each: {@link ReadRounds} decides the order (rounds in file-offset order,
 * read-ahead only when idle), {@link ReadBuffers} holds the memory (a fixed pool of segments, one
 * large buffer at a time), {@link ChunkReads} does the reads (aligned, buffered, pieces of runs
 * read around, larger than the pool), and {@link WarmUps} reads ahead into the page cache. A read's
 * discipline across them: it waits in a round, reserves its segments on a reader thread when its
 * turn comes, and its bytes give them back when released.
 *
 * <p>Thread-safety: every method may be called from any thread; only {@link #close()} waits (for
 * the reads queued before it).
 */
public final class DiskReader implements AutoCloseable {
  /** Size of one pooled read buffer. */
  public static final int SEGMENT_BYTES = ReadBuffers.SEGMENT_BYTES;

  /** Warm-ups kept waiting at most; a newer one pushes out the oldest, by now the least useful. */
  static final int MAX_QUEUED_WARMS = ReadRounds.MAX_QUEUED_IDLE;

  private final String name;
  private final ReadBuffers buffers;
  private final ReadRounds rounds;
  private final ChunkReads reads;
  private final WarmUps warmUps;

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
    this.name = requireNonNull(name, "name is null");
    this.buffers = new ReadBuffers(name, direct, bufferBytes, waitForBuffersMillis);
    this.rounds = new ReadRounds(name, threadCount);
    this.warmUps = new WarmUps(name, direct == null, buffers, rounds);
    this.reads =
        new ChunkReads(
            direct,
            buffers,
            readAroundBytes,
            (run, offset, length, covered) -> warmUps.queue(run, offset, length, true, covered));
  }

  /** The most bytes one read can take; a larger chunk is read with {@link #readLarge}. */
  public long maxReadBytes() {
    return buffers.maxReadBytes();
  }

  /** Segments reserved by reads in progress or lent out in answers being sent. */
  public int segmentsInUse() {
    return buffers.inUse();
  }

  /** Reads waiting for their turn: queued for the next round, or not yet taken in this one. */
  public int queuedReads() {
    return rounds.waiting();
  }

  /**
   * Bytes read from files since start (with direct I/O, whole blocks: a little more than the chunks
   * asked for), including those of reads that failed part way.
   */
  public long readBytes() {
    return reads.readBytes();
  }

  /**
   * Nanoseconds spent opening files and reading {@link #readBytes()} from them since start (not the
   * wait in the queue or for buffers, not read-ahead): their ratio is how fast the disk serves.
   */
  public long readNanos() {
    return reads.readNanos();
  }

  /** Bytes that read-ahead found outside the page cache and loaded, since start. */
  public long warmedBytes() {
    return warmUps.warmedBytes();
  }

  /** Bytes that read-ahead found in the page cache already (nothing to do), since start. */
  public long warmResidentBytes() {
    return warmUps.residentBytes();
  }

  /** Nanoseconds spent on read-ahead since start (checking and loading). */
  public long warmNanos() {
    return warmUps.nanos();
  }

  /** Whether {@link #warm} does anything here: only on a disk read through the page cache. */
  public boolean readsThroughPageCache() {
    return warmUps.enabled();
  }

  /** Bytes read around pieces of runs since start (see {@link #read(List, BooleanSupplier)}). */
  public long readAroundBytes() {
    return reads.aroundBytes();
  }

  /** Reads of runs that read around their piece, since start. */
  public long readsAround() {
    return reads.aroundReads();
  }

  /**
   * Queues the read-ahead of the first {@code length} bytes of {@code file} ({@link WarmUps});
   * never blocks. The future completes once done: true when the bytes were loaded or found
   * resident, false when nothing was done (a disk with direct I/O, a warm-up pushed out of the
   * queue or queued at close, a file that cannot be read).
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
    return warmUps.queue(file, offset, length, checkResident, covered -> {});
  }

  /**
   * Queues a read of {@code length} bytes of {@code file} at {@code offset}, served by a reader
   * thread in its round ({@link ReadRounds}); never blocks. The future completes with bytes the
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
    checkRange(file, offset, length);
    return enqueue(
        new QueuedRead<>(
            file, offset, length, stillWanted, () -> reads.range(file, offset, length)));
  }

  /**
   * As {@link #read(List, BooleanSupplier)}, for an answer that may be sent from the file itself: a
   * chunk that is one piece of a file (a location with a file of its own) and whose every page a
   * reader thread finds in the page cache, in its turn, completes as a {@link FileRegion} (no
   * buffers taken, nothing copied here; the send copies from the page cache); any other is read
   * into buffers as by {@code read}. The caller owns what it gets.
   */
  public CompletableFuture<ReferenceCounted> readOrRegion(
      List<Extent> pieces, BooleanSupplier stillWanted) {
    if (pieces.size() != 1 || reads.readsAround() || !warmUps.enabled()) {
      return read(pieces, stillWanted).<ReferenceCounted>thenApply(bytes -> bytes);
    }
    Path file = pieces.get(0).file();
    long offset = pieces.get(0).offset();
    int size = (int) Math.min(Integer.MAX_VALUE, pieces.get(0).length());
    checkRange(file, offset, size);
    return enqueue(
        new QueuedRead<ReferenceCounted>(
            file,
            offset,
            size,
            stillWanted,
            () -> {
              FileRegion region = reads.residentRegion(file, offset, size);
              return region != null ? region : reads.range(file, offset, size);
            }));
  }

  /**
   * Bytes sent as regions of files found in the page cache ({@link #readOrRegion}), since start.
   */
  public long regionBytes() {
    return reads.regionBytes();
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
    if (pieces.size() == 1 && !reads.readsAround()) {
      Extent only = pieces.get(0);
      return read(
          only.file(),
          only.offset(),
          (int) Math.min(Integer.MAX_VALUE, only.length()),
          stillWanted);
    }
    long total = totalOf(pieces);
    if (total > maxReadBytes() || !warmUps.enabled()) {
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
    return enqueue(pieces, (int) total, stillWanted, reads::pieces);
  }

  /**
   * Reads a chunk larger than {@link #maxReadBytes()} (one huge pushed part, in one file or in
   * pieces of runs): on a reader thread like every read, in its turn, in reads of at most a
   * segment, through the page cache, into one buffer of its own outside the pool. One such buffer
   * per disk at a time: a second large read waits for the first's buffer to be sent or dropped, at
   * most as long as a read waits for segments (then TIMEOUT, retryable). Never on a network thread.
   */
  public CompletableFuture<ByteBuf> readLarge(List<Extent> pieces, BooleanSupplier stillWanted) {
    long total = totalOf(pieces);
    if (pieces.isEmpty() || total > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "cannot read " + total + " bytes in " + pieces.size() + " pieces with " + name);
    }
    return enqueue(pieces, (int) total, stillWanted, reads::large);
  }

  /** Queues the read of {@code pieces}, {@code total} bytes in all, the way {@code how} reads. */
  private CompletableFuture<ByteBuf> enqueue(
      List<Extent> pieces,
      int total,
      BooleanSupplier stillWanted,
      BiFunction<List<Extent>, Integer, ByteBuf> how) {
    List<Extent> copy = List.copyOf(pieces);
    Extent first = copy.get(0);
    return enqueue(
        new QueuedRead<>(
            first.file(), first.offset(), total, stillWanted, () -> how.apply(copy, total)));
  }

  /** A range one read may take: not empty, not before the file, at most {@link #maxReadBytes}. */
  private void checkRange(Path file, long offset, int length) {
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
  }

  private static long totalOf(List<Extent> pieces) {
    long total = 0;
    for (Extent piece : pieces) {
      if (piece.length() <= 0) {
        throw new IllegalArgumentException("an empty piece of " + piece.file() + " to read");
      }
      total += piece.length();
    }
    return total;
  }

  private <T extends ReferenceCounted> CompletableFuture<T> enqueue(QueuedRead<T> read) {
    if (!rounds.add(read)) {
      read.result.completeExceptionally(
          new FaroException(ErrorCode.SHUTTING_DOWN, "worker is shutting down"));
    }
    return read.result;
  }

  /**
   * Stops taking reads (later ones fail with SHUTTING_DOWN) and stops the reader threads once the
   * reads queued before ran. Lent segments come back as usual.
   */
  @Override
  public void close() {
    rounds.close();
  }

  /** How a queued read reads, on a reader thread. */
  private interface Reading<T extends ReferenceCounted> {
    T readNow();
  }

  /** A read waiting for its turn, and the answer its asker waits for. */
  private static final class QueuedRead<T extends ReferenceCounted> implements ReadRounds.Read {
    private final Path file;
    private final long offset;
    private final int length;
    private final BooleanSupplier stillWanted;
    private final Reading<T> reading;
    final CompletableFuture<T> result = new CompletableFuture<>();

    QueuedRead(
        Path file, long offset, int length, BooleanSupplier stillWanted, Reading<T> reading) {
      this.file = requireNonNull(file, "file is null");
      this.offset = offset;
      this.length = length;
      this.stillWanted = requireNonNull(stillWanted, "stillWanted is null");
      this.reading = reading;
    }

    @Override
    public Path file() {
      return file;
    }

    @Override
    public long offset() {
      return offset;
    }

    /** Reads now, on a reader thread; always completes {@link #result}. */
    @Override
    public void serve() {
      try {
        if (!stillWanted.getAsBoolean()) {
          result.completeExceptionally(
              new FaroException(
                  ErrorCode.CONNECTION_FAILED, "the read of " + file + " is no longer wanted"));
          return;
        }
        assert !NetworkThreads.isCurrent() : "a disk read on an event loop";
        T bytes = reading.readNow();
        if (!result.complete(bytes)) {
          bytes.release(); // completed otherwise meanwhile: nobody else will release them
        }
      } catch (FaroException e) {
        result.completeExceptionally(e);
      } catch (Throwable t) {
        // Errors too (e.g. out of direct memory): the fetch must get an answer.
        result.completeExceptionally(
            new FaroException(
                ErrorCode.STORAGE_FAILED,
                "cannot read " + length + " bytes of " + file + ": " + t,
                t));
      }
    }
  }
}
