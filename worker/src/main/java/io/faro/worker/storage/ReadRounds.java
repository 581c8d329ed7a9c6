package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The order in which one disk's reader threads serve its reads: in rounds, in file-offset order
 * (the elevator of Flink's sort-merge read scheduler), and idle work (read-ahead) only when no read
 * waits.
 *
 * <p>Reducers fetch their chunks concurrently, so in arrival order a disk would jump between files
 * and back and forth within them; sorted, it sweeps forward through one file after another, and on
 * an HDD most seeks become short ones. A round takes every read queued when it starts and sorts
 * them by file and offset; the reader threads take its reads in that order, and reads that arrive
 * meanwhile wait for the next round, so a read waits for at most one round before its own, however
 * many reads with smaller offsets keep arriving. With one reader thread (an HDD) a round is served
 * strictly in order; with several (flash), they take its reads in order and serve them side by
 * side.
 *
 * <p>Idle work is taken, oldest first, only when no read is queued; only the latest {@link
 * #MAX_QUEUED_IDLE} wait (a newer one pushes out the oldest, by now the least useful).
 *
 * <p>Thread-safety: every method may be called from any thread; only {@link #close()} waits.
 */
final class ReadRounds implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReadRounds.class);

  /** Idle work kept waiting at most. */
  static final int MAX_QUEUED_IDLE = 256;

  /** A read a round serves: where it starts, and how to serve it. */
  interface Read {
    Path file();

    long offset();

    /** Serves the read on a reader thread; answers its asker whatever happens, never throws. */
    void serve();
  }

  /** Work done only when the reader threads have no read to serve. */
  interface Idle {
    /** Does the work on a reader thread; never throws. */
    void serve();

    /** Tells the asker that the work will not be done (pushed out, or queued at close). */
    void drop();
  }

  /** The order in which a round serves its reads; a stable sort keeps ties in arrival order. */
  private static final Comparator<Read> FILE_ORDER =
      Comparator.comparing(Read::file).thenComparingLong(Read::offset);

  private final String name;
  private final List<Thread> threads = new ArrayList<>();
  private final Object lock = new Object();
  // @GuardedBy("lock"): reads waiting for the next round, in arrival order.
  private final List<Read> queued = new ArrayList<>();
  // @GuardedBy("lock"): the reads of the current round not taken by a thread yet, in file order.
  private final ArrayDeque<Read> round = new ArrayDeque<>();
  // @GuardedBy("lock"): idle work waiting for the reader threads to have nothing else to do.
  private final ArrayDeque<Idle> idle = new ArrayDeque<>();
  // Written under lock; read without it by idle work, to stop early.
  private volatile boolean closed;

  /** Starts {@code threadCount} reader threads named {@code <name>-N}. */
  ReadRounds(String name, int threadCount) {
    this.name = requireNonNull(name, "name is null");
    if (threadCount < 1) {
      throw new IllegalArgumentException("threadCount must be positive: " + threadCount);
    }
    DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
    for (int i = 0; i < threadCount; i++) {
      Thread thread = factory.newThread(this::serve);
      threads.add(thread);
      thread.start();
    }
  }

  /** Queues {@code read} for the next round; false once closed (then nothing is queued). */
  boolean add(Read read) {
    requireNonNull(read, "read is null");
    synchronized (lock) {
      if (closed) {
        return false;
      }
      queued.add(read);
      // One idle thread is enough for one read; a thread that starts a round wakes the others.
      lock.notify();
      return true;
    }
  }

  /** Queues idle work; drops the oldest past {@link #MAX_QUEUED_IDLE}, or this one once closed. */
  void addIdle(Idle work) {
    requireNonNull(work, "work is null");
    Idle dropped;
    synchronized (lock) {
      if (closed) {
        dropped = work;
      } else {
        idle.addLast(work);
        dropped = idle.size() > MAX_QUEUED_IDLE ? idle.pollFirst() : null;
        lock.notify();
      }
    }
    if (dropped != null) {
      dropped.drop();
    }
  }

  /** Reads waiting for their turn: queued for the next round, or not yet taken in this one. */
  int waiting() {
    synchronized (lock) {
      return queued.size() + round.size();
    }
  }

  boolean closed() {
    return closed;
  }

  /** A reader thread's life: serves reads until closed and every read is served. */
  private void serve() {
    for (Runnable task = next(); task != null; task = next()) {
      task.run();
    }
  }

  /**
   * The next read to serve: the current round's next one, or the first of a new round when the
   * current one is all taken, or, with no read at all, the oldest idle work; waits while there is
   * none. Null once closed with no read left.
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
        } else if (!idle.isEmpty()) {
          return idle.pollFirst()::serve;
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

  /**
   * Takes no more reads, drops the idle work waiting, and stops the reader threads once the reads
   * queued before ran (waiting at most 30 s).
   */
  @Override
  public void close() {
    List<Idle> dropped;
    synchronized (lock) {
      closed = true;
      dropped = new ArrayList<>(idle);
      idle.clear();
      lock.notifyAll();
    }
    dropped.forEach(Idle::drop);
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
}
