package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.RemoteException;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * The frames of one map attempt on their way: batches bound for the same worker gather into one
 * frame until it holds faro.client.push.merge.size; frames go out asynchronously with at most
 * faro.client.push.max.in.flight unanswered (the task's thread waits for a permit, at most
 * faro.network.request.timeout); answers release the batches their worker kept and hand the others
 * to {@link Revivals}. This window is where the worker's back-off belongs.
 *
 * <p>Threads: {@link #add}, {@link #sendAll}, {@link #awaitAnswers} and {@link #close} on the
 * task's thread; the answer callbacks touch only the semaphore, the revivals, the first failure and
 * the flags.
 */
final class PushWindow {
  /** Batches gathered for one worker, not yet sent. Owns its batches. */
  private static final class PendingFrame {
    final HostPort address;
    final List<PushedBatch> parts = new ArrayList<>();
    long bytes;

    PendingFrame(HostPort address) {
      this.address = address;
    }
  }

  private final ShuffleId shuffle;
  private final int mapId;
  private final int attemptId;
  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final ByteBufAllocator allocator;
  private final Revivals revivals;
  private final Map<WorkerId, PendingFrame> pending = new HashMap<>();
  private final Semaphore inFlight;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile LongConsumer pushAnswered = nanos -> {};
  // Set by an answer callback when a batch was refused because the shuffle was committed.
  private volatile boolean incomplete;
  private volatile boolean closed;
  private long blockedNanos;

  PushWindow(
      ShuffleId shuffle,
      int mapId,
      int attemptId,
      ClientPool pool,
      ClientOptions.Settings settings,
      ByteBufAllocator allocator,
      Revivals revivals) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.mapId = mapId;
    this.attemptId = attemptId;
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.allocator = requireNonNull(allocator, "allocator is null");
    this.revivals = requireNonNull(revivals, "revivals is null");
    this.inFlight = new Semaphore(settings.maxInFlight());
  }

  /**
   * Adds {@code batch} to the frame of its target's worker (takes it); sends the frame once full.
   */
  void add(PushedBatch batch) {
    WorkerId worker = batch.target().worker();
    PendingFrame frame =
        pending.computeIfAbsent(worker, w -> new PendingFrame(batch.target().endpoint().push()));
    frame.parts.add(batch);
    frame.bytes += batch.batch().readableBytes();
    if (frame.bytes >= settings.mergeSize()) {
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
    acquire(settings.maxInFlight());
    inFlight.release(settings.maxInFlight());
    checkFailure();
  }

  /**
   * Sends the frame gathered for {@code worker}. The frame stays in {@link #pending} (so that
   * {@link #close()} releases it) until a permit is held: waiting for one may fail. Its batches
   * stay held until the worker acknowledges them.
   */
  private void send(WorkerId worker) {
    acquire(1);
    PendingFrame frame = pending.remove(worker);
    if (frame == null) {
      inFlight.release();
      return;
    }
    PushRequest.Builder meta = PushRequest.newBuilder().setShuffle(IdMapper.toProto(shuffle));
    CompositeByteBuf body = allocator.compositeDirectBuffer(frame.parts.size());
    for (PushedBatch p : frame.parts) {
      meta.addParts(
          PushPart.newBuilder()
              .setPartitionId(p.partition())
              .setEpoch(p.target().epoch())
              .setLength(p.batch().readableBytes()));
      body.addComponent(true, p.batch().retainedDuplicate());
    }
    long sentAt = System.nanoTime();
    pool.send(frame.address, meta.build(), body, settings.network().requestTimeout())
        .whenComplete(
            (answer, error) -> {
              try {
                if (error != null) {
                  Throwable cause = Futures.unwrap(error);
                  String why = "push to " + frame.address + " failed: " + cause.getMessage();
                  // A worker that answered with an error is alive; one that did not answer is
                  // suspect.
                  Optional<WorkerId> failed =
                      cause instanceof RemoteException ? Optional.empty() : Optional.of(worker);
                  frame.parts.forEach(p -> revivals.failed(p, why, failed));
                } else {
                  PushResponse response;
                  try {
                    response = answer.meta(PushResponse.class);
                  } catch (RuntimeException e) {
                    // Not an answer to a push: nothing is known to be kept, push it all again.
                    String why =
                        "push to " + frame.address + " got an unexpected answer: " + e.getMessage();
                    frame.parts.forEach(p -> revivals.failed(p, why, Optional.empty()));
                    return;
                  }
                  answered(frame, response);
                  reportLatency(System.nanoTime() - sentAt);
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
                inFlight.release();
              }
            });
  }

  /** Releases acknowledged batches; hands the others to the revivals. */
  private void answered(PendingFrame frame, PushResponse response) {
    for (int i = 0; i < frame.parts.size(); i++) {
      PushedBatch p = frame.parts.get(i);
      PushStatusP status =
          i < response.getStatusesCount()
              ? response.getStatuses(i)
              : PushStatusP.PUSH_STATUS_UNSPECIFIED;
      switch (status) {
        case OK, SLOW_DOWN -> p.batch().release();
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
        default ->
            revivals.failed(
                p,
                "worker "
                    + frame.address
                    + " answered "
                    + status
                    + " for partition "
                    + p.partition()
                    + " epoch "
                    + p.target().epoch(),
                Optional.empty());
      }
    }
  }

  private void acquire(int permits) {
    long start = System.nanoTime();
    try {
      boolean acquired =
          inFlight.tryAcquire(
              permits, settings.network().requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
      blockedNanos += System.nanoTime() - start;
      if (!acquired) {
        throw new FaroException(
            ErrorCode.TIMEOUT,
            "pushes of map "
                + mapId
                + " attempt "
                + attemptId
                + " of shuffle "
                + shuffle
                + " got no answer within "
                + settings.network().requestTimeout().toMillis()
                + "ms (faro.network.request.timeout)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaroException(
          ErrorCode.INTERNAL, "interrupted while pushing map " + mapId + " of " + shuffle, e);
    }
    try {
      checkFailure();
    } catch (RuntimeException e) {
      inFlight.release(permits);
      throw e;
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

  /** Time the task's thread spent waiting for permits (answers). */
  long blockedNanos() {
    return blockedNanos;
  }

  /** Frames sent and not answered yet. */
  int unanswered() {
    return settings.maxInFlight() - inFlight.availablePermits();
  }

  /** Whether some batch was refused because the shuffle was already committed (STAGE_ENDED). */
  boolean incomplete() {
    return incomplete;
  }

  /**
   * Releases the frames not sent; answers still on their way release the batches they return.
   * Idempotent.
   */
  void close() {
    closed = true;
    for (PendingFrame frame : pending.values()) {
      frame.parts.forEach(p -> p.batch().release());
    }
    pending.clear();
  }
}
