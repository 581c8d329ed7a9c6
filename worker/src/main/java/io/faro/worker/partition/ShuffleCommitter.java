package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionKey;
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
 * Commits a shuffle's locations and records the commit before it is answered, and finds a committed
 * location for a fetch: the commit closes every writer of the shuffle (each on its flusher), adds
 * the locations an earlier run sealed, and records the whole in the commit log on {@code recorder},
 * the disk thread seals and expiries record on, so that the records keep the order the decisions
 * were made in.
 */
final class ShuffleCommitter {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleCommitter.class);

  private final Disks disks;
  private final Executor recorder;
  private final Supplier<CommitLog> commitLog;
  private final TrafficCounters counters;

  ShuffleCommitter(
      Disks disks, Executor recorder, Supplier<CommitLog> commitLog, TrafficCounters counters) {
    this.disks = requireNonNull(disks, "disks is null");
    this.recorder = requireNonNull(recorder, "recorder is null");
    this.commitLog = requireNonNull(commitLog, "commitLog is null");
    this.counters = requireNonNull(counters, "counters is null");
  }

  /** See {@link PartitionStore#commit(ShuffleId, long)}; {@code state} null: nothing here. */
  CompletableFuture<ShuffleCommit> commit(ShuffleId shuffle, ShuffleState state, long ownerToken) {
    if (state == null) {
      return CompletableFuture.completedFuture(ShuffleCommit.nothing());
    }
    synchronized (state) {
      state.checkOwner(ownerToken, "commit");
      if (state.commit == null) {
        state.commitStarted = true;
        List<CompletableFuture<PartitionCommit>> parts = state.finishAll(PartitionWriter::commit);
        // Idle locations are committed empty, without a task; locations an earlier run sealed on
        // its way out are committed as they are.
        LocationKeys empty = state.emptyLocations();
        List<PartitionCommit.Committed> known = new ArrayList<>();
        state.restored.values().forEach(r -> known.add(r.commit()));
        LOG.info(
            "Committing shuffle {}: {} partition locations, {} of them empty{}",
            shuffle,
            parts.size() + known.size() + empty.size(),
            empty.size(),
            state.restored.isEmpty()
                ? ""
                : " (" + state.restored.size() + " sealed before a restart)");
        long token = state.ownerToken();
        String nonce = state.appNonce();
        // Recorded on the recorder thread (the one the sealer and expiries write on, in order),
        // never on the caller's: an RPC event loop when every part is already done.
        state.commit =
            CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApplyAsync(
                    done ->
                        record(shuffle, token, nonce, ShuffleCommit.collect(parts, known, empty)),
                    recorder);
      }
      return state.commit;
    }
  }

  /** Records {@code commit} before it is answered; a failure to record costs only restarts. */
  private ShuffleCommit record(
      ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit commit) {
    counters.committed(commit);
    try {
      commitLog.get().committed(shuffle, ownerToken, appNonce, commit);
    } catch (IOException | RuntimeException e) {
      LOG.error(
          "Cannot record the commit of shuffle {}: it is served until this worker restarts, not"
              + " after",
          shuffle,
          e);
    }
    return commit;
  }

  /** See {@link PartitionStore#disk}; {@code state} is {@code key}'s shuffle's, or null. */
  Disk disk(PartitionKey key, ShuffleState state) {
    RestoredPartition restored = state == null ? null : state.restored.get(key);
    if (restored != null) {
      return disks.get(restored.diskIndex());
    }
    PartitionWriter writer = state == null ? null : state.writers.get(key);
    if (writer != null) {
      return disks.get(writer.diskIndex());
    }
    IdleLocations.Idle idle = state == null ? null : idle(state, key);
    if (idle != null) {
      return disks.get(idle.diskIndex());
    }
    if (state != null && state.restoredEmpty.contains(key.partition(), key.epoch())) {
      return disks.get(0); // it has no data on any disk
    }
    throw new FaroException(ErrorCode.UNKNOWN_PARTITION, "this worker holds no partition " + key);
  }

  /** See {@link PartitionStore#committed}; {@code state} is {@code key}'s shuffle's, or null. */
  PartitionCommit.Committed committed(PartitionKey key, ShuffleState state) {
    RestoredPartition restored = state == null ? null : state.restored.get(key);
    if (restored != null) {
      if (!state.commitStarted) {
        throw notCommitted(key, " is sealed, not committed yet: shuffle ");
      }
      return restored.commit();
    }
    PartitionWriter writer = state == null ? null : state.writers.get(key);
    if (writer == null) {
      if (state == null
          || (idle(state, key) == null
              && !state.restoredEmpty.contains(key.partition(), key.epoch()))) {
        throw new FaroException(
            ErrorCode.UNKNOWN_PARTITION, "this worker holds no partition " + key);
      }
      // Idle: it received nothing, and is committed empty once the shuffle's commit started.
      if (!state.commitStarted) {
        throw notCommitted(key, " is not committed yet: shuffle ");
      }
      return PartitionCommit.Committed.empty(key);
    }
    CompletableFuture<PartitionCommit> outcome = writer.commitOutcome().orElse(null);
    if (outcome == null || !outcome.isDone()) {
      throw notCommitted(key, " is not committed yet: shuffle ");
    }
    PartitionCommit commit = outcome.join();
    if (commit instanceof PartitionCommit.Failed f) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED, "partition " + key + " failed: " + f.reason());
    }
    return (PartitionCommit.Committed) commit;
  }

  private static IdleLocations.Idle idle(ShuffleState state, PartitionKey key) {
    synchronized (state) {
      return state.idle.get(key.partition(), key.epoch());
    }
  }

  private static FaroException notCommitted(PartitionKey key, String what) {
    return new FaroException(
        ErrorCode.SHUFFLE_NOT_COMMITTED,
        "partition " + key + what + key.shuffle() + " still takes pushes");
  }
}
