package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.ShuffleId;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.Disks;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes an expired shuffle: its writers' buffers and files, its runs, the files an earlier run
 * committed or sealed, its record in the commit log, and last its directories, once no flusher can
 * write into them any more. Every file operation and the record run on disk threads, never on the
 * caller's (the heartbeat's).
 */
final class ShuffleExpiry {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleExpiry.class);

  private final Disks disks;
  private final Executor recorder;
  private final Supplier<CommitLog> commitLog;

  ShuffleExpiry(Disks disks, Executor recorder, Supplier<CommitLog> commitLog) {
    this.disks = requireNonNull(disks, "disks is null");
    this.recorder = requireNonNull(recorder, "recorder is null");
    this.commitLog = requireNonNull(commitLog, "commitLog is null");
  }

  /**
   * Deletes {@code shuffle}, whose state was just removed from the store ({@code state} null: it
   * held nothing here), after {@code released} hears how many writers it held.
   */
  CompletableFuture<Void> expire(ShuffleId shuffle, ShuffleState state, Reservations released) {
    List<PartitionWriter> writers;
    List<RestoredPartition> restored;
    int idle;
    if (state == null) {
      writers = List.of();
      restored = List.of();
      idle = 0;
    } else {
      synchronized (state) {
        state.expired = true;
        writers = List.copyOf(state.writers.values());
        restored = List.copyOf(state.restored.values());
        idle = state.idle.size();
      }
    }
    // Idle locations have nothing to delete.
    released.released(writers.size(), idle);
    // The deletions of the locations that share a flusher thread run as one task on it: an
    // expiry costs a task per thread of each disk the shuffle used, not one per location (a
    // shuffle of 100,000 locations queued as many tasks, and a graceful stop dropped them).
    Map<Executor, List<Runnable>> byThread = new IdentityHashMap<>();
    for (PartitionWriter w : writers) {
      w.discard();
      w.deletion()
          .ifPresent(
              d -> byThread.computeIfAbsent(d.thread(), t -> new ArrayList<>()).add(d.delete()));
    }
    for (RestoredPartition r : restored) {
      r.commit()
          .file()
          .ifPresent(
              file -> {
                Disk disk = disks.get(r.diskIndex());
                byThread
                    .computeIfAbsent(disk.flusher().anyThread(), t -> new ArrayList<>())
                    .add(() -> disk.deleteFile(file));
              });
    }
    LOG.info(
        "Expiring shuffle {}: deleting {} partition locations in {} tasks",
        shuffle,
        writers.size() + idle + restored.size(),
        byThread.size());
    List<CompletableFuture<?>> deletions = new ArrayList<>();
    byThread.forEach((thread, tasks) -> deletions.add(runAll(shuffle, tasks, thread)));
    if (state != null) {
      // After the writers' deletions: a run written meanwhile is written before the directory
      // goes.
      deletions.add(state.closeRuns());
      // A store write: on a disk thread, like the deletions. Either order with the deletions is
      // safe: a record whose file is gone is dropped at the next start, a file without a record is
      // deleted there.
      deletions.add(CompletableFuture.runAsync(() -> forget(shuffle), recorder));
    }
    // Directories go last, once no flusher can write into them any more.
    return CompletableFuture.allOf(deletions.toArray(CompletableFuture[]::new))
        .thenCompose(done -> disks.deleteShuffleDirectories(shuffle));
  }

  /**
   * Runs {@code tasks} on {@code thread}, each whatever the others threw. A thread that stopped
   * (the worker is on its way out) deletes nothing: the files go at the next start, with no record.
   */
  private static CompletableFuture<Void> runAll(
      ShuffleId shuffle, List<Runnable> tasks, Executor thread) {
    try {
      return CompletableFuture.runAsync(
          () -> {
            for (Runnable task : tasks) {
              try {
                task.run();
              } catch (RuntimeException e) {
                LOG.warn("Expiring shuffle {}: a deletion failed: {}", shuffle, e.toString());
              }
            }
          },
          thread);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.completedFuture(null);
    }
  }

  private void forget(ShuffleId shuffle) {
    try {
      commitLog.get().forgotten(shuffle);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot forget shuffle {} in the metadata store: {}", shuffle, e.toString());
    }
  }
}
