package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.MapAttempt;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The retry and revive queue of one map attempt: batches whose push failed (the connection was lost
 * or timed out, the location refused them with SPLIT, the replica did not confirm them) and
 * partitions that split softly, as the answers report them; and, on the task's thread, the revive
 * that moves those partitions to new locations (one request per partition, for the newest epoch
 * that failed), after which the failed batches are pushed again, as the same batches.
 *
 * <p>Answer callbacks add; the task's thread takes. Owns the batches it holds.
 */
final class Revivals {
  /**
   * A batch to push again: {@code cause} says why, {@code worker} the worker that failed, if it
   * did.
   */
  private record Retry(
      PushedBatch pushed, String cause, Optional<WorkerId> worker, ErrorCode whenExhausted) {}

  private final ShuffleId shuffle;
  private final int mapId;
  private final int attemptId;
  private final int maxAttempts;
  private final MapPusher.Reviver reviver;
  private final Targets targets;
  private final Queue<Retry> retries = new ConcurrentLinkedQueue<>();
  private final Queue<PartitionLocation> softSplits = new ConcurrentLinkedQueue<>();
  private long revived;

  /**
   * @param maxAttempts faro.client.push.revive.max.attempts: pushes of one batch before the task
   *     fails
   * @param targets the current location of every partition, which a revive moves on
   */
  Revivals(
      ShuffleId shuffle,
      MapAttempt attempt,
      int maxAttempts,
      MapPusher.Reviver reviver,
      Targets targets) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.mapId = attempt.mapId();
    this.attemptId = attempt.attemptId();
    this.maxAttempts = maxAttempts;
    this.reviver = requireNonNull(reviver, "reviver is null");
    this.targets = requireNonNull(targets, "targets is null");
  }

  /** {@code pushed} was not kept and must be pushed again (takes it); any thread. */
  void failed(PushedBatch pushed, String cause, Optional<WorkerId> worker) {
    failed(pushed, cause, worker, ErrorCode.CONNECTION_FAILED);
  }

  /**
   * As above; {@code whenExhausted} is the task's error code if this was the batch's last attempt.
   */
  void failed(
      PushedBatch pushed, String cause, Optional<WorkerId> worker, ErrorCode whenExhausted) {
    retries.add(new Retry(pushed, cause, worker, whenExhausted));
  }

  /** The partition at {@code location} split softly: its later batches go elsewhere; any thread. */
  void softSplit(PartitionLocation location) {
    softSplits.add(location);
  }

  /** Whether there is a batch to push again or a partition to move. */
  boolean isEmpty() {
    return retries.isEmpty() && softSplits.isEmpty();
  }

  boolean hasRetries() {
    return !retries.isEmpty();
  }

  /** Forgets the soft splits (once nothing more will be pushed, none needs a new location). */
  void dropSoftSplits() {
    softSplits.clear();
  }

  /**
   * Moves the partitions that failed or split to new locations (asking the reviver, unless another
   * task of this executor moved them already) and returns the failed batches, bound for their
   * partition's new location, for the caller to push. On the task's thread.
   *
   * @throws FaroException when a batch was pushed faro.client.push.revive.max.attempts times, or
   *     the revive failed; the batches taken are released first
   */
  List<PushedBatch> revive() {
    List<Retry> failed = new ArrayList<>();
    for (Retry r; (r = retries.poll()) != null; ) {
      failed.add(r);
    }
    List<PartitionLocation> split = new ArrayList<>();
    for (PartitionLocation l; (l = softSplits.poll()) != null; ) {
      split.add(l);
    }
    Map<Integer, MapPusher.Failed> ask = new LinkedHashMap<>();
    for (Retry r : failed) {
      if (r.pushed().attempts() + 1 > maxAttempts) {
        failed.forEach(x -> x.pushed().batch().release());
        throw new FaroException(
            r.whenExhausted(),
            "batch of partition "
                + r.pushed().partition()
                + " of map "
                + mapId
                + " attempt "
                + attemptId
                + " of shuffle "
                + shuffle
                + " was pushed "
                + (r.pushed().attempts() + 1)
                + " times without success (faro.client.push.revive.max.attempts "
                + maxAttempts
                + "); last: "
                + r.cause());
      }
      need(ask, r.pushed().target(), r.worker());
    }
    split.forEach(l -> need(ask, l, Optional.empty()));
    if (!ask.isEmpty()) {
      List<MapPusher.Failed> request = List.copyOf(ask.values());
      List<PartitionLocation> moved;
      try {
        moved = reviver.revive(request);
      } catch (RuntimeException e) {
        failed.forEach(x -> x.pushed().batch().release());
        String cause = failed.isEmpty() ? "" : " after: " + failed.get(0).cause();
        throw new FaroException(
            e instanceof FaroException fe ? fe.code() : ErrorCode.INTERNAL,
            "cannot move partitions of map "
                + mapId
                + " attempt "
                + attemptId
                + " of shuffle "
                + shuffle
                + " to new locations"
                + cause
                + ": "
                + e.getMessage(),
            e);
      }
      revived += request.size();
      for (PartitionLocation l : moved) {
        targets.accumulateAndGet(
            l.partition(),
            l,
            (old, next) -> old == null || old.epoch() < next.epoch() ? next : old);
      }
    }
    List<PushedBatch> again = new ArrayList<>(failed.size());
    for (Retry r : failed) {
      again.add(r.pushed().again(targets.get(r.pushed().partition())));
    }
    return again;
  }

  /**
   * Asks for a new location of the partition that failed at {@code failedAt}, unless it moved on.
   */
  private void need(
      Map<Integer, MapPusher.Failed> ask, PartitionLocation failedAt, Optional<WorkerId> worker) {
    PartitionLocation now = targets.get(failedAt.partition());
    if (now.epoch() > failedAt.epoch()) {
      return; // already moved on
    }
    ask.merge(
        failedAt.partition(),
        new MapPusher.Failed(failedAt.partition(), failedAt.epoch(), worker),
        (a, b) -> a.worker().isPresent() ? a : b);
  }

  /** Partitions this attempt asked new locations for (revives and splits). */
  long revived() {
    return revived;
  }

  /** Releases every batch held: the task is gone, nothing will push them again. Any thread. */
  void releaseAll() {
    for (Retry r; (r = retries.poll()) != null; ) {
      r.pushed().batch().release();
    }
  }
}
