package io.faro.worker.storage;

import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IO threads of one disk. Each thread is a single-threaded executor; a partition is pinned to
 * one of them by its key, so its writes, its commit and its deletion run in submission order and
 * its {@link PartitionFile} is confined to that thread.
 *
 * <p>The task queues are unbounded on purpose: what bounds them is the memory budget (the bytes
 * waiting in them are counted and push connections pause above the mark), and a bounded queue would
 * have to block or fail the Netty event loop that hands work over.
 */
public final class DiskFlusher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskFlusher.class);

  private final String name;
  private final ThreadPoolExecutor[] threads;

  /** Starts {@code threadCount} threads named {@code <name>-N}. */
  public DiskFlusher(String name, int threadCount) {
    if (threadCount < 1) {
      throw new IllegalArgumentException("threadCount must be positive: " + threadCount);
    }
    this.name = name;
    this.threads = new ThreadPoolExecutor[threadCount];
    DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
    for (int i = 0; i < threadCount; i++) {
      threads[i] =
          new ThreadPoolExecutor(
              1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), factory);
    }
  }

  /** The thread that every task of {@code key} runs on. */
  public Executor threadFor(PartitionKey key) {
    return threads[Math.floorMod(key.hashCode(), threads.length)];
  }

  /** The thread that every task of {@code shuffle}'s runs of one role ({@code role}) runs on. */
  public Executor threadFor(ShuffleId shuffle, int role) {
    return threads[Math.floorMod(31 * shuffle.hashCode() + role, threads.length)];
  }

  /** A thread for work that belongs to no single partition (e.g. removing directories). */
  public Executor anyThread() {
    return threads[0];
  }

  /** Tasks waiting on every thread of this disk. */
  public int queuedTasks() {
    int queued = 0;
    for (ThreadPoolExecutor thread : threads) {
      queued += thread.getQueue().size();
    }
    return queued;
  }

  /**
   * Runs the queued tasks (they release the buffers they hold) and stops. Tasks submitted
   * afterwards are rejected with {@link RejectedExecutionException}; submitters release what they
   * meant to hand over.
   */
  @Override
  public void close() {
    for (ThreadPoolExecutor thread : threads) {
      thread.shutdown();
    }
    for (ThreadPoolExecutor thread : threads) {
      try {
        if (!thread.awaitTermination(30, TimeUnit.SECONDS)) {
          LOG.warn("{}: flusher did not finish its queued writes within 30s", name);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
