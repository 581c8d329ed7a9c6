package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.ShuffleId;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.Disks;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
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
    if (state == null) {
      writers = List.of();
      restored = List.of();
    } else {
      synchronized (state) {
        state.expired = true;
        writers = List.copyOf(state.writers.values());
        restored = List.copyOf(state.restored.values());
      }
    }
    released.released(writers.size());
    LOG.info(
        "Expiring shuffle {}: deleting {} partition locations",
        shuffle,
        writers.size() + restored.size());
    List<CompletableFuture<?>> deletions = new ArrayList<>();
    writers.forEach(w -> deletions.add(w.discard(true)));
    if (state != null) {
      // After the writers' discards: a run written meanwhile is written before the directory goes.
      deletions.add(state.closeRuns());
    }
    restored.forEach(r -> deletions.add(deleteRestored(r)));
    if (state != null) {
      // A store write: on a disk thread, like the deletions. Either order with the deletions is
      // safe: a record whose file is gone is dropped at the next start, a file without a record is
      // deleted there.
      deletions.add(CompletableFuture.runAsync(() -> forget(shuffle), recorder));
    }
    // Directories go last, once no flusher can write into them any more.
    return CompletableFuture.allOf(deletions.toArray(CompletableFuture[]::new))
        .thenCompose(done -> disks.deleteShuffleDirectories(shuffle));
  }

  private void forget(ShuffleId shuffle) {
    try {
      commitLog.get().forgotten(shuffle);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot forget shuffle {} in the metadata store: {}", shuffle, e.toString());
    }
  }

  /** Deletes a restored location's file on its disk's flusher. */
  private CompletableFuture<Void> deleteRestored(RestoredPartition r) {
    if (r.commit().file().isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    Disk disk = disks.get(r.diskIndex());
    return CompletableFuture.runAsync(
        () -> disk.deleteFile(r.commit().file().get()), disk.flusher().anyThread());
  }
}
