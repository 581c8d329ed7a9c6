package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.WorkerId;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.common.network.RemoteException;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads the answers to the push frames of one map attempt, batch by batch: a batch its worker kept
 * (OK, SLOW_DOWN, SOFT_SPLIT) is released, and so is one that no attempt needs any more
 * (STAGE_ENDED, which marks the attempt incomplete); a SOFT_SPLIT also moves the partition's later
 * batches. Every other batch, and every batch of a frame that got no answer or an answer that is
 * not a push's, goes to the {@link Revivals} to be pushed again.
 *
 * <p>Overload never fails a task and never moves a partition: the worker kept every batch it
 * answered SLOW_DOWN, so the batch is released like an OK one, never handed to the revivals. Only
 * the worker's window hears of it, through the {@link Pace} an answer returns.
 *
 * <p>Threads: the answer callbacks; the counters and the flag are read on any thread.
 */
final class PushAnswers {
  private final Revivals revivals;
  private final AtomicLong slowDowns = new AtomicLong();
  // Set when a batch was refused because the shuffle was committed.
  private volatile boolean incomplete;

  PushAnswers(Revivals revivals) {
    this.revivals = requireNonNull(revivals, "revivals is null");
  }

  /**
   * {@code frame}, sent to {@code worker}, got no answer but {@code error}: all is pushed again.
   */
  void failed(PendingFrame frame, WorkerId worker, Throwable error) {
    Throwable cause = Futures.unwrap(error);
    String why = "push to " + frame.address + " failed: " + cause.getMessage();
    // A worker that answered with an error is alive; one that did not answer is suspect.
    Optional<WorkerId> failed =
        cause instanceof RemoteException ? Optional.empty() : Optional.of(worker);
    frame.parts.forEach(p -> revivals.failed(p, why, failed));
  }

  /**
   * Reads {@code answer} to {@code frame}: says whether the worker kept up or asked to slow down,
   * and {@link Pace#UNKNOWN} only when the answer is not a push's (nothing is known to be kept: it
   * is all pushed again).
   */
  Pace answered(PendingFrame frame, Frame answer) {
    PushResponse response;
    try {
      response = answer.meta(PushResponse.class);
    } catch (RuntimeException e) {
      String why = "push to " + frame.address + " got an unexpected answer: " + e.getMessage();
      frame.parts.forEach(p -> revivals.failed(p, why, Optional.empty()));
      return Pace.UNKNOWN;
    }
    Pace pace = statuses(frame, response);
    if (pace == Pace.SLOW_DOWN) {
      slowDowns.incrementAndGet();
    }
    return pace;
  }

  /**
   * Releases acknowledged batches; hands the others to the revivals. Says whether the worker asked
   * to slow down: SLOW_DOWN parts were kept, like OK ones, so only the window hears of it.
   */
  private Pace statuses(PendingFrame frame, PushResponse response) {
    Pace pace = Pace.KEPT_UP;
    for (int i = 0; i < frame.parts.size(); i++) {
      PushedBatch p = frame.parts.get(i);
      PushStatusP status =
          i < response.getStatusesCount()
              ? response.getStatuses(i)
              : PushStatusP.PUSH_STATUS_UNSPECIFIED;
      switch (status) {
        case OK -> p.batch().release();
        case SLOW_DOWN -> {
          p.batch().release();
          pace = Pace.SLOW_DOWN;
        }
        case STAGE_ENDED -> {
          // The shuffle was committed while this attempt still pushes (a speculative copy, or a
          // task the engine ran again after losing an executor): the batch is in no file. Another
          // attempt of this map won already; mapper end says this one is incomplete, so that it
          // can never win with data no file holds.
          p.batch().release();
          incomplete = true;
        }
        case SOFT_SPLIT -> {
          p.batch().release();
          revivals.softSplit(p.target());
        }
        case WORKER_FULL ->
            // The worker is alive but takes no new partitions: left out of this app's revives.
            revivals.failed(
                p,
                answer(frame, status, p)
                    + ": it holds as many partitions with data as its"
                    + " faro.worker.max.written.partitions allows",
                Optional.of(p.target().worker()),
                ErrorCode.LIMIT_EXCEEDED);
        case REPLICA_FAILED ->
            // The replica did not confirm (gone, or full): its worker is left out of revives.
            revivals.failed(
                p,
                answer(frame, status, p)
                    + ": its replica on worker "
                    + p.target().replica().map(r -> r.worker().toString()).orElse("?")
                    + " did not confirm the part (the primary's log says why)",
                p.target().replica().map(PartitionLocation::worker),
                ErrorCode.CONNECTION_FAILED);
        default -> revivals.failed(p, answer(frame, status, p), Optional.empty());
      }
    }
    return pace;
  }

  /**
   * "worker W answered STATUS for partition P epoch E": how a refusal reads in the task's error.
   */
  private static String answer(PendingFrame frame, PushStatusP status, PushedBatch p) {
    return "worker "
        + frame.address
        + " answered "
        + status
        + " for partition "
        + p.partition()
        + " epoch "
        + p.target().epoch();
  }

  /** Answers that said SLOW_DOWN for some part of their frame. Any thread. */
  long slowDowns() {
    return slowDowns.get();
  }

  /** Whether some batch was refused because the shuffle was already committed (STAGE_ENDED). */
  boolean incomplete() {
    return incomplete;
  }
}
