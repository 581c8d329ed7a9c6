package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read-ahead on one disk read through the page cache: brings a file that reducers will soon fetch
 * into the page cache ahead of them, when the reader threads have no chunk read to serve (what to
 * read ahead is {@link ReadAhead}'s plan, or the window after a read around a run).
 *
 * <p>Reducers fetch a partition only when their task starts and then spend time on its records, so
 * without it the disk idles while they compute and they wait while it reads; with it, the disk's
 * time overlaps theirs. A warm-up skips a file whose pages are all resident (asked of the kernel
 * through a mapping), else reads it through one segment of the pool, taken only when one is free
 * and no read waits for one, in reads as large as a chunk read's. A thread takes a warm-up only
 * when no chunk read is queued ({@link ReadRounds.Idle}), and stops it after the segment during
 * which a chunk read came to wait (for a thread or for buffers), so a fetch waits for one segment's
 * read at most; with several threads, a warm-up may run beside the chunk reads other threads serve.
 * (Loading the mapping instead would read most of the file in page faults, in requests of the
 * read-ahead window's size: many more of them on a disk priced in requests.)
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
final class WarmUps {
  private static final Logger LOG = LoggerFactory.getLogger(WarmUps.class);

  private final String name;
  private final boolean enabled;
  private final ReadBuffers buffers;
  private final ReadRounds rounds;
  private final AtomicLong warmedBytes = new AtomicLong();
  private final AtomicLong residentBytes = new AtomicLong();
  private final AtomicLong nanos = new AtomicLong();

  /** Warm-ups of a disk; {@code enabled} false (direct I/O) makes every one do nothing. */
  WarmUps(String name, boolean enabled, ReadBuffers buffers, ReadRounds rounds) {
    this.name = requireNonNull(name, "name is null");
    this.enabled = enabled;
    this.buffers = requireNonNull(buffers, "buffers is null");
    this.rounds = requireNonNull(rounds, "rounds is null");
  }

  boolean enabled() {
    return enabled;
  }

  /** Bytes found outside the page cache and loaded, since start. */
  long warmedBytes() {
    return warmedBytes.get();
  }

  /** Bytes found in the page cache already (nothing to do), since start. */
  long residentBytes() {
    return residentBytes.get();
  }

  /**
   * Whether every page of the {@code bytes} of {@code channel}'s file from {@code offset} is in the
   * page cache (mmap and mincore; unmapped at once, not whenever the collector finds the mapping).
   */
  static boolean resident(FileChannel channel, long offset, long bytes) throws IOException {
    MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_ONLY, offset, bytes);
    try {
      return mapped.isLoaded();
    } finally {
      PlatformDependent.freeDirectBuffer(mapped);
    }
  }

  /** Nanoseconds spent on read-ahead since start (checking and loading). */
  long nanos() {
    return nanos.get();
  }

  /**
   * Queues the warm-up of {@code length} bytes of {@code file} from {@code offset}; never blocks.
   * The future completes once done: true when the bytes were loaded or found resident, false when
   * nothing was done (disabled, pushed out of the queue or queued at close, a file that cannot be
   * read: read-ahead is only a saving, its failures are the chunk read's to report). {@code
   * checkResident} false reads the bytes whether resident or not (for tests, whose files always
   * are); {@code covered} is told, before the counters, how many bytes from the offset were found
   * resident or read.
   */
  CompletableFuture<Boolean> queue(
      Path file, long offset, long length, boolean checkResident, LongConsumer covered) {
    WarmUp warm =
        new WarmUp(requireNonNull(file, "file is null"), offset, length, checkResident, covered);
    if (!enabled || length <= 0) {
      warm.done.complete(false);
    } else {
      rounds.addIdle(warm);
    }
    return warm.done;
  }

  /** Whether a chunk read waits: for a reader thread, or for read buffers. */
  private boolean fetchWaiting() {
    return rounds.waiting() > 0 || buffers.readWaiting();
  }

  private final class WarmUp implements ReadRounds.Idle {
    final Path file;
    final long offset;
    final long length;
    final boolean checkResident;
    final LongConsumer whenCovered;
    final CompletableFuture<Boolean> done = new CompletableFuture<>();

    WarmUp(Path file, long offset, long length, boolean checkResident, LongConsumer whenCovered) {
      this.file = file;
      this.offset = offset;
      this.length = length;
      this.checkResident = checkResident;
      this.whenCovered = requireNonNull(whenCovered, "whenCovered is null");
    }

    @Override
    public void drop() {
      done.complete(false);
    }

    /**
     * Checks whether the {@code length} bytes from the offset (fewer if the file is shorter) are
     * resident, and reads them through one pooled segment, over and over, if not.
     */
    @Override
    public void serve() {
      long start = System.nanoTime();
      boolean warmed = false;
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
        long bytes = Math.max(0, Math.min(length, channel.size() - offset));
        if (bytes > 0 && checkResident && resident(channel, offset, bytes)) {
          whenCovered.accept(bytes);
          residentBytes.addAndGet(bytes);
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
        nanos.addAndGet(System.nanoTime() - start);
        done.complete(warmed);
      }
    }

    /**
     * Reads the bytes in segment-sized reads, as a fetch would (the kernel reads them in requests
     * as large as the device takes), into a segment of the pool taken only if one is free: a disk
     * whose buffers are all lent out is busy serving fetches, and reads nothing ahead. Stops after
     * the segment during which a chunk read was queued.
     */
    private boolean readThrough(FileChannel channel, long bytes) throws IOException {
      // Not ahead of a read that waits for buffers (a plain tryAcquire would barge past it).
      if (fetchWaiting() || !buffers.tryReserveOne()) {
        return false;
      }
      ByteBuffer memory = null;
      long position = 0;
      try {
        memory = buffers.take();
        while (position < bytes) {
          memory.clear().limit((int) Math.min(memory.capacity(), bytes - position));
          int n = channel.read(memory, offset + position);
          if (n <= 0) {
            break;
          }
          position += n;
          if (fetchWaiting() || rounds.closed()) {
            break; // a fetch goes first; the rest of this file is read when it is fetched
          }
        }
        whenCovered.accept(position);
        return true;
      } finally {
        warmedBytes.addAndGet(position);
        if (memory != null) {
          buffers.giveBack(memory);
        } else {
          buffers.unreserve(1);
        }
      }
    }
  }
}
