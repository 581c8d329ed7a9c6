package io.faro.worker.partition;

import io.faro.worker.storage.ChunkIndex;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Where a partition location's bytes go on its disk, and when they are written: a file of its own
 * ({@link OwnFile}), or the runs its shuffle writes on the disk ({@link ShuffleRuns}). {@link
 * PartitionWriter} keeps the state machine, the pending parts and the chunk boundaries, which are
 * the same in every layout; a layout decides when the pending parts are taken and writes them.
 *
 * <p>Threads: {@link #added}, {@link #dropped} and {@link #finish} are called inside the writer's
 * lock, so that what they queue is queued in append order; they only count and queue. The writing
 * happens on the disk's flusher threads.
 */
interface LocationLayout {
  /** {@code writer} took {@code bytes} more; called under its lock. */
  void added(PartitionWriter writer, long bytes);

  /** Writes what {@code writer} buffers, however little (memory relief); not under its lock. */
  void flushBuffered(PartitionWriter writer);

  /**
   * {@code writer} finishes (commit or seal) with {@code parts} not written yet and {@code chunks}
   * as its index: {@code result} completes once everything is written (and forced with
   * faro.worker.commit.sync), always, with the writer's outcome. Called under its lock; takes
   * ownership of {@code parts}.
   */
  void finish(
      PartitionWriter writer,
      List<PartitionWriter.Part> parts,
      ChunkIndex chunks,
      CompletableFuture<PartitionCommit> result);

  /** {@code writer} was discarded with {@code bytes} pending, which it releases; under its lock. */
  void dropped(PartitionWriter writer, long bytes);

  /**
   * How what a discarded writer wrote is deleted: {@link Deletion#delete} run on {@link
   * Deletion#thread}, after every write queued there before. Empty for a layout that shares its
   * files with other locations (the shuffle's expiry deletes them with its directory). The caller
   * runs the deletions of many writers that share a thread in one task.
   */
  Optional<Deletion> deletion(PartitionWriter writer);

  /** A deletion to run on {@code thread}, the one thread that writes the location's file. */
  record Deletion(Executor thread, Runnable delete) {}
}
