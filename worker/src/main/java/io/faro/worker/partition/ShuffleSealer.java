package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seals the shuffles a worker holds on its way out (a graceful stop, a drain): every open location
 * of a shuffle not committed is sealed ({@link PartitionWriter#seal}: what was acknowledged is
 * written, indexed and synced, later pushes are answered SPLIT), and the shuffle's sealed
 * locations, with those an earlier run sealed, are recorded in the commit log, so that a restarted
 * worker answers the shuffle's commit with them. Commits already under way are waited for; they
 * record themselves.
 *
 * <p>Threads: the seal is started on the caller's thread (under each shuffle's lock, a few field
 * updates per writer); the records, a write per shuffle (synced with faro.worker.commit.sync), on
 * {@code recorder} (a disk thread, the one commits and expiries are recorded on), never on the
 * caller's, which may be the heartbeat's, and never under the shuffle's lock.
 */
final class ShuffleSealer {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleSealer.class);

  private final Executor recorder;
  private final Supplier<CommitLog> commitLog;
  private final TrafficCounters counters;

  ShuffleSealer(Executor recorder, Supplier<CommitLog> commitLog, TrafficCounters counters) {
    this.recorder = requireNonNull(recorder, "recorder is null");
    this.commitLog = requireNonNull(commitLog, "commitLog is null");
    this.counters = requireNonNull(counters, "counters is null");
  }

  /** Seals {@code shuffles}; completes once every file is sealed and recorded. */
  CompletableFuture<SealReport> sealAll(Collection<ShuffleState> shuffles) {
    List<CompletableFuture<SealReport>> each = new ArrayList<>();
    shuffles.forEach(state -> each.add(seal(state)));
    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
        .thenApply(
            done ->
                each.stream()
                    .map(CompletableFuture::join)
                    .reduce(SealReport.NOTHING, SealReport::plus));
  }

  private CompletableFuture<SealReport> seal(ShuffleState state) {
    List<CompletableFuture<PartitionCommit>> parts;
    LocationKeys empty;
    synchronized (state) {
      if (state.expired) {
        return CompletableFuture.completedFuture(SealReport.NOTHING);
      }
      if (state.commitStarted) {
        CompletableFuture<ShuffleCommit> commit = state.commit;
        return commit == null
            ? CompletableFuture.completedFuture(SealReport.NOTHING)
            : commit.handle((c, e) -> SealReport.NOTHING);
      }
      parts = state.finishAll(PartitionWriter::seal);
      // Idle locations are sealed empty: a later part goes to a new location.
      state.idle.sealAll();
      empty = state.emptyLocations();
    }
    return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
        .thenApplyAsync(
            done -> record(state, ShuffleCommit.collect(parts, List.of(), empty)), recorder);
  }

  /**
   * Records the sealed locations of {@code state}, with those an earlier run sealed, unless the
   * shuffle was committed or expired meanwhile: a commit that started after the seal records the
   * whole shuffle as committed itself, always after this record (it starts under the same lock), so
   * a sealed record never overwrites a committed one.
   */
  private SealReport record(ShuffleState state, ShuffleCommit sealed) {
    List<PartitionCommit.Committed> all = new ArrayList<>(sealed.committed());
    long token;
    String nonce;
    // Decided under the lock, written outside it: pushes to the shuffle never wait for the store.
    // The order with a commit's record holds all the same, since both are written on this one
    // recorder thread, in the order they were decided (a commit that starts after this decision
    // has its record queued behind this task).
    synchronized (state) {
      if (state.expired || state.commitStarted) {
        return SealReport.NOTHING;
      }
      state.restored.values().forEach(r -> all.add(r.commit()));
      token = state.ownerToken();
      nonce = state.appNonce();
    }
    int unrecorded = all.size() + sealed.empty().size() + sealed.failed().size();
    CommitLog log = commitLog.get();
    if (log == CommitLog.NONE) {
      // No metadata store: the files are whole, but no restart will know of them.
      return new SealReport(0, 0, unrecorded);
    }
    try {
      log.sealed(state.id, token, nonce, new ShuffleCommit(all, sealed.failed(), sealed.empty()));
    } catch (IOException | RuntimeException e) {
      LOG.error(
          "Cannot record the sealed locations of shuffle {}: they are not served after a"
              + " restart",
          state.id,
          e);
      return new SealReport(0, 0, unrecorded);
    }
    int sealedLocations = sealed.committed().size() + sealed.empty().size();
    counters.sealed(sealedLocations);
    return new SealReport(sealedLocations, 1, sealed.failed().size());
  }
}
