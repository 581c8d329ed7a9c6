package io.faro.worker.partition;

import java.util.concurrent.atomic.LongAdder;

/**
 * What went through this worker since it started: bytes appended and forwarded to replicas, split
 * answers, chunks served. Counted where it happens (the store's appends, the push path's forwards,
 * the fetch handler) and read by the status RPC; kept in one place so that they can be exported
 * together.
 *
 * <p>Thread-safe: counted on every push and fetch event loop at once, hence adders rather than one
 * atomic each.
 */
public final class TrafficCounters {
  private final LongAdder appendedBytes = new LongAdder();
  private final LongAdder splitAnswers = new LongAdder();
  private final LongAdder forwardedBytes = new LongAdder();
  private final LongAdder fetchedChunks = new LongAdder();

  /** Counts the bytes of one part a partition took (ACCEPTED or SOFT_SPLIT). */
  void appended(long bytes) {
    appendedBytes.add(bytes);
  }

  /** Counts one part a partition answered SOFT_SPLIT or SPLIT. */
  void splitAnswered() {
    splitAnswers.increment();
  }

  /** Counts bytes forwarded to replicas. */
  public void forwarded(long bytes) {
    forwardedBytes.add(bytes);
  }

  /** Counts one chunk served to a reducer. */
  public void chunkFetched() {
    fetchedChunks.increment();
  }

  /** Bytes appended since start. */
  public long appendedBytes() {
    return appendedBytes.sum();
  }

  /** Parts answered SOFT_SPLIT or SPLIT since start. */
  public long splitAnswers() {
    return splitAnswers.sum();
  }

  /** Bytes forwarded to replicas since start. */
  public long forwardedBytes() {
    return forwardedBytes.sum();
  }

  /** Chunks served to reducers since start. */
  public long fetchedChunks() {
    return fetchedChunks.sum();
  }
}
