package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.MapAttempt;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * The frames of one map attempt on their way: batches bound for the same worker gather into one
 * frame until it holds faro.client.push.merge.size; frames go out asynchronously, and answers
 * release the batches their worker kept and hand the others to {@link Revivals}.
 *
 * <p>Its parts: {@link PushBounds} holds a frame back until the task has fewer than
 * faro.client.push.max.in.flight frames unanswered and its worker's {@link WorkerWindow}, which
 * follows the worker's SLOW_DOWN answers, has room; {@link PushAnswers} reads each answer, batch by
 * batch. This class gathers the frames, sends them and gives each frame's room back when its answer
 * came, whatever it said.
 *
 * <p>Back-pressure costs the task only time: {@link #slowDowns()} counts the SLOW_DOWN answers, and
 * {@link #backOffNanos()} the time the task waited for room in a worker's window once the global
 * bound had let its frame go (the part of {@link #blockedNanos()} that back-pressure caused).
 *
 * <p>Threads: {@link #add}, {@link #sendAll}, {@link #awaitAnswers} and {@link #close} on the
 * task's thread; the answer callbacks touch only the bounds (the semaphore and the worker windows,
 * each guarded by its own monitor), the counters of answers, the revivals, the first failure and
 * the flags.
 */
final class PushWindow {
  private final ShuffleId shuffle;
  private final ClientPool pool;
  private final ClientSettings settings;
  private final ByteBufAllocator allocator;
  private final Revivals revivals;
  private final Map<WorkerId, PendingFrame> pending = new HashMap<>();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final PushBounds bounds;
  private final PushAnswers answers;
  private volatile LongConsumer pushAnswered = nanos -> {};
  private volatile boolean closed;

  PushWindow(
      ShuffleId shuffle,
      MapAttempt attempt,
      ClientPool pool,
      ClientSettings settings,
      ByteBufAllocator allocator,
      Revivals revivals) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.allocator = requireNonNull(allocator, "allocator is null");
    this.revivals = requireNonNull(revivals, "revivals is null");
    this.bounds = new PushBounds(shuffle, attempt, settings, this::checkFailure);
    this.answers = new PushAnswers(revivals);
  }

  /**
   * Adds {@code batch} to the frame of its target's worker (takes it); sends the frame once full
   * (faro.client.push.merge.size bytes, or faro.network.max.parts.per.push parts).
   */
  void add(PushedBatch batch) {
    WorkerId worker = batch.target().worker();
    PendingFrame frame =
        pending.computeIfAbsent(worker, w -> new PendingFrame(batch.target().endpoint().push()));
    frame.add(batch);
    // Workers refuse a frame of more parts than faro.network.max.parts.per.push before parsing it.
    if (frame.bytes >= settings.mergeSize()
        || frame.parts.size() >= settings.network().limits().partsPerPush()) {
      send(worker);
    }
  }

  /** Sends every frame gathered so far, full or not. */
  void sendAll() {
    for (WorkerId worker : new ArrayList<>(pending.keySet())) {
      send(worker);
    }
  }

  /** Waits until every frame sent was answered; throws the first failure of an answer. */
  void awaitAnswers() {
    bounds.awaitAll();
    checkFailure();
  }

  /**
   * Sends the frame gathered for {@code worker}. The frame stays in {@link #pending} (so that
   * {@link #close()} releases it) until a permit of the global bound and room in the worker's
   * window are held: waiting for them may fail. Its batches stay held until the worker acknowledges
   * them.
   */
  private void send(WorkerId worker) {
    PushBounds.Slot slot = bounds.take(worker);
    PendingFrame frame = pending.remove(worker);
    if (frame == null) {
      bounds.unsent(slot, false);
      return;
    }
    long sentAt = System.nanoTime();
    CompletableFuture<Frame> sent = push(frame, slot);
    sent.whenComplete((answer, error) -> answered(worker, frame, slot, sentAt, answer, error));
  }

  /**
   * Hands {@code frame} to its worker's connection. When it cannot be sent (out of direct memory,
   * say), gives back the slot and throws: the task fails with this, holding nothing.
   */
  private CompletableFuture<Frame> push(PendingFrame frame, PushBounds.Slot slot) {
    CompositeByteBuf body = null;
    boolean handedOver = false;
    try {
      PushRequest.Builder meta = PushRequest.newBuilder().setShuffle(IdMapper.toProto(shuffle));
      body = allocator.compositeDirectBuffer(frame.parts.size());
      for (PushedBatch p : frame.parts) {
        meta.addParts(
            PushPart.newBuilder()
                .setPartitionId(p.partition())
                .setEpoch(p.target().epoch())
                .setLength(p.batch().readableBytes()));
        body.addComponent(true, p.batch().retainedDuplicate());
      }
      bounds.handingOver();
      handedOver = true;
      return pool.send(frame.address, meta.build(), body, settings.network().requestTimeout());
    } catch (RuntimeException | Error e) {
      // A body handed to the pool is the pool's; one it never saw is released here.
      if (!handedOver && body != null) {
        body.release();
      }
      frame.release();
      bounds.unsent(slot, handedOver);
      throw e;
    }
  }

  /**
   * The answer to {@code frame}, or the error it got instead: its batches go where the answer says,
   * and its room goes back, whatever happened.
   */
  private void answered(
      WorkerId worker,
      PendingFrame frame,
      PushBounds.Slot slot,
      long sentAt,
      Frame answer,
      Throwable error) {
    Pace pace = Pace.UNKNOWN;
    try {
      if (error != null) {
        answers.failed(frame, worker, error);
      } else {
        pace = answers.answered(frame, answer);
        if (pace != Pace.UNKNOWN) {
          reportLatency(System.nanoTime() - sentAt);
        }
      }
    } catch (RuntimeException e) {
      // Nobody reads this future: an unexpected answer must fail the task, not vanish.
      failure.compareAndSet(null, e);
    } finally {
      if (answer != null) {
        answer.release();
      }
      if (closed) {
        revivals.releaseAll(); // the task is gone: nothing will push these again
      }
      bounds.answered(slot, pace);
    }
  }

  /** Throws the first failure an answer met, if any. */
  void checkFailure() {
    Throwable t = failure.get();
    if (t != null) {
      throw t instanceof FaroException fe
          ? fe
          : new FaroException(ErrorCode.INTERNAL, t.toString(), t);
    }
  }

  private void reportLatency(long nanos) {
    try {
      pushAnswered.accept(nanos);
    } catch (RuntimeException e) {
      // A listener's failure says nothing about the push, which succeeded.
    }
  }

  /** Hears the latency of every answered push, on a network thread: keep it cheap. */
  void onPushAnswered(LongConsumer listener) {
    pushAnswered = requireNonNull(listener, "listener is null");
  }

  /**
   * Time the task's thread spent waiting for answers: for permits of the global bound and for room
   * in a worker's window ({@link #backOffNanos()} included).
   */
  long blockedNanos() {
    return bounds.blockedNanos();
  }

  /**
   * Time the task's thread spent waiting for room in the window of a worker that asked it to slow
   * down; part of {@link #blockedNanos()}.
   */
  long backOffNanos() {
    return bounds.backOffNanos();
  }

  /** Answers that said SLOW_DOWN for some part of their frame. Any thread. */
  long slowDowns() {
    return answers.slowDowns();
  }

  /** Frames sent and not answered yet. Any thread. */
  int unanswered() {
    return bounds.unanswered();
  }

  /** Frames sent to {@code worker} and not answered yet. Any thread. */
  int unanswered(WorkerId worker) {
    return bounds.unanswered(worker);
  }

  /**
   * Frames {@code worker} may have unanswered now: max.in.flight until it asks to slow down. Any
   * thread.
   */
  int window(WorkerId worker) {
    return bounds.window(worker);
  }

  /** Whether some batch was refused because the shuffle was already committed (STAGE_ENDED). */
  boolean incomplete() {
    return answers.incomplete();
  }

  /**
   * Releases the frames not sent; answers still on their way release the batches they return.
   * Idempotent.
   */
  void close() {
    closed = true;
    for (PendingFrame frame : pending.values()) {
      frame.release();
    }
    pending.clear();
  }
}
