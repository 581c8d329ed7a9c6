package io.faro.worker.partition;

import java.util.concurrent.atomic.LongAdder;

/**
 * What went through this worker since it started: bytes appended and forwarded to replicas, split
 * answers, files committed, chunks served, locations sealed on the way out and taken back from an
 * earlier run. Counted where it happens (the store's appends, the push path's forwards, the fetch
 * handler) and read by the status RPC; kept in one place so that they can be exported together.
 *
 * <p>Thread-safe: counted on every push and fetch event loop at once, hence adders rather than one
 * atomic each.
 */
public final class TrafficCounters {
  private final LongAdder appendedBytes = new LongAdder();
  private final LongAdder splitAnswers = new LongAdder();
  private final LongAdder fullAnswers = new LongAdder();
  private final LongAdder forwardedBytes = new LongAdder();
  private final LongAdder fetchedChunks = new LongAdder();
  private final LongAdder fetchedBytes = new LongAdder();
  private final LongAdder leftOutBytes = new LongAdder();
  private final LongAdder restoredLocations = new LongAdder();
  private final LongAdder restoredSealedLocations = new LongAdder();
  private final LongAdder sealedLocations = new LongAdder();
  private final LongAdder committedFiles = new LongAdder();
  private final LongAdder committedBytes = new LongAdder();

  /** Counts the partition files with data of one shuffle's commit on this worker. */
  void committed(ShuffleCommit commit) {
    for (PartitionCommit.Committed c : commit.committed()) {
      long bytes = c.chunks().dataLength();
      if (bytes > 0) {
        committedFiles.increment();
        committedBytes.add(bytes);
      }
    }
  }

  /** Partition files with data committed since start (what a partition's size is learned from). */
  public long committedFiles() {
    return committedFiles.sum();
  }

  /** Their bytes. */
  public long committedBytes() {
    return committedBytes.sum();
  }

  /** Counts the bytes of one part a partition took (OK or SOFT_SPLIT). */
  void appended(long bytes) {
    appendedBytes.add(bytes);
  }

  /** Counts one part a partition answered SOFT_SPLIT or SPLIT. */
  void splitAnswered() {
    splitAnswers.increment();
  }

  /** Counts one first part refused WORKER_FULL (faro.worker.max.written.partitions). */
  void fullAnswered() {
    fullAnswers.increment();
  }

  /** Counts bytes forwarded to replicas. */
  public void forwarded(long bytes) {
    forwardedBytes.add(bytes);
  }

  /**
   * Counts one chunk served to a reducer: {@code bytes} sent, and {@code leftOut} of its bytes not
   * sent because they belong to other maps than the reader asked for.
   */
  public void chunkFetched(long bytes, long leftOut) {
    fetchedChunks.increment();
    fetchedBytes.add(bytes);
    leftOutBytes.add(leftOut);
  }

  /** Counts locations an earlier run left that are served again; {@code sealed}: not committed. */
  void restored(int locations, boolean sealed) {
    (sealed ? restoredSealedLocations : restoredLocations).add(locations);
  }

  /** Counts locations sealed and recorded on the way out (a graceful stop, a drain). */
  void sealed(int locations) {
    sealedLocations.add(locations);
  }

  /** Committed locations of an earlier run served again since start. */
  public long restoredLocations() {
    return restoredLocations.sum();
  }

  /** Locations an earlier run sealed on its way out, taken back at start. */
  public long restoredSealedLocations() {
    return restoredSealedLocations.sum();
  }

  /** Locations this run sealed and recorded. */
  public long sealedLocations() {
    return sealedLocations.sum();
  }

  /** Bytes appended since start. */
  public long appendedBytes() {
    return appendedBytes.sum();
  }

  /** Parts answered SOFT_SPLIT or SPLIT since start. */
  public long splitAnswers() {
    return splitAnswers.sum();
  }

  /** First parts answered WORKER_FULL since start. */
  public long fullAnswers() {
    return fullAnswers.sum();
  }

  /** Bytes forwarded to replicas since start. */
  public long forwardedBytes() {
    return forwardedBytes.sum();
  }

  /** Bytes of chunks served to reducers since start. */
  public long fetchedBytes() {
    return fetchedBytes.sum();
  }

  /** Bytes of chunks not sent to readers of some maps since start: other maps' batches. */
  public long leftOutBytes() {
    return leftOutBytes.sum();
  }

  /** Chunks served to reducers since start. */
  public long fetchedChunks() {
    return fetchedChunks.sum();
  }
}
