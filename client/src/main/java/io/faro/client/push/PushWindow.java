package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * The frames of one map attempt on their way: batches bound for the same worker gather into one
 * frame until it holds faro.client.push.merge.size; frames go out asynchronously, and answers
 * release the batches their worker kept and hand the others to {@link Revivals}.
 *
 * <p>Two bounds hold a frame back, and the task's thread waits for both (at most twice
 * faro.network.request.timeout in all: every frame sent before the wait is answered or timed out by
 * then, and its revive under way). All workers together may have faro.client.push.max.in.flight
 * frames of this task unanswered. Each worker, besides, has its own window ({@link WorkerWindow}),
 * which follows the worker's back-pressure: a worker whose memory is above its slow-down mark
 * answers SLOW_DOWN (and at its pause mark stops reading push connections until flushes bring its
 * memory down), so the task sends it fewer frames at once. Other workers keep their whole window,
 * but the task has one thread: while it waits for room in a slowed worker's window, it sends to no
 * one (a frame gathers for one worker at a time, so a task pushes no faster than its slowest worker
 * takes).
 *
 * <ul>
 *   <li>A worker's window starts at max.in.flight.
 *   <li>An answer with a SLOW_DOWN for any of its parts halves that worker's window, down to {@link
 *       #MIN_WINDOW} frame: never to none, so that a slowed worker still gets this task's data, one
 *       frame at a time. The window halves at most once per window of frames: the answers to frames
 *       sent before it halved tell of the same overload, so they neither halve it again nor grow
 *       it.
 *   <li>Answers without a SLOW_DOWN (OK, splits, refusals: the worker read the frame and kept up)
 *       grow the window by one frame per window's worth of them, up to max.in.flight: one more
 *       frame per round of answers, as TCP grows its window once it has seen congestion.
 *   <li>A frame that got no answer (a timeout, a lost connection, an error answer) changes nothing:
 *       what is wrong with that worker is the revivals' business.
 * </ul>
 *
 * <p>Overload never fails a task and never moves a partition: the worker kept every batch it
 * answered SLOW_DOWN, so the batch is released like an OK one, never handed to the revivals. Only
 * waiting costs: {@link #slowDowns()} counts the SLOW_DOWN answers, and {@link #backOffNanos()} the
 * time the task waited for room in a worker's window once the global bound had let its frame go
 * (the part of {@link #blockedNanos()} that back-pressure caused).
 *
 * <p>Threads: {@link #add}, {@link #sendAll}, {@link #awaitAnswers} and {@link #close} on the
 * task's thread; the answer callbacks touch only the semaphore, the worker windows (each guarded by
 * its own monitor), the counters of answers, the revivals, the first failure and the flags.
 *
 * <p>Over 400 lines, knowingly: the global bound, each worker's AIMD window and the answer
 * callbacks release the same permits on every path, success or failure; kept in one class so that
 * each path can be checked against the others.
 */
final class PushWindow {
  /** The smallest window a worker's SLOW_DOWN answers bring it to: one frame at a time. */
  static final int MIN_WINDOW = 1;

  /** What an answer says about its worker's pace. */
  private enum Pace {
    /** Read and answered without a SLOW_DOWN. */
    KEPT_UP,
    /** Some part was answered SLOW_DOWN. */
    SLOW_DOWN,
    /** No answer to judge by: a timeout, a lost connection, an error or unexpected answer. */
    UNKNOWN
  }

  /**
   * The frames one worker may have unanswered, and how many it has; an AIMD window (see the class
   * comment). Frames sent to the worker are numbered, so that an answer can tell whether its frame
   * left before the window last halved. Guarded by its own monitor: the task's thread waits on it
   * for room, answer callbacks change it and wake the task.
   */
  private static final class WorkerWindow {
    private final int max;
    private int limit;
    private int unanswered;
    // The number the next frame sent gets.
    private long sent;
    // Frames numbered below it left before the last halving: their answers change nothing.
    private long halvedAt;
    // Answers that kept up since the window last grew or halved.
    private int keptUp;

    WorkerWindow(int max) {
      this.max = max;
      this.limit = max;
    }

    /**
     * Takes room for one frame, waiting until {@code deadline} ({@link System#nanoTime()}) at most;
     * returns the frame's number, or -1 when the time ran out.
     */
    synchronized long take(long deadline) throws InterruptedException {
      while (unanswered >= limit) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return -1;
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      unanswered++;
      return sent++;
    }

    /** Frees the room of frame {@code number}, whose answer said {@code pace}. */
    synchronized void free(long number, Pace pace) {
      unanswered--;
      if (number >= halvedAt) {
        switch (pace) {
          case SLOW_DOWN -> {
            limit = Math.max(MIN_WINDOW, limit / 2);
            halvedAt = sent;
            keptUp = 0;
          }
          case KEPT_UP -> {
            if (limit < max && ++keptUp >= limit) {
              limit++;
              keptUp = 0;
            }
          }
          case UNKNOWN -> {}
        }
      }
      notifyAll();
    }

    /** Frames the worker may have unanswered now. */
    synchronized int limit() {
      return limit;
    }

    /** Frames sent to the worker and not answered yet. */
    synchronized int unanswered() {
      return unanswered;
    }
  }

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
  // Read by tests and diagnostics on other threads; changed on the task's thread only.
  private final Map<WorkerId, WorkerWindow> windows = new ConcurrentHashMap<>();
  private final AtomicInteger unanswered = new AtomicInteger();
  private final AtomicLong slowDowns = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile LongConsumer pushAnswered = nanos -> {};
  // Set by an answer callback when a batch was refused because the shuffle was committed.
  private volatile boolean incomplete;
  private volatile boolean closed;
  private long blockedNanos;
  private long backOffNanos;

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
   * Adds {@code batch} to the frame of its target's worker (takes it); sends the frame once full
   * (faro.client.push.merge.size bytes, or faro.network.max.parts.per.push parts).
   */
  void add(PushedBatch batch) {
    WorkerId worker = batch.target().worker();
    PendingFrame frame =
        pending.computeIfAbsent(worker, w -> new PendingFrame(batch.target().endpoint().push()));
    frame.parts.add(batch);
    frame.bytes += batch.batch().readableBytes();
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
    long start = System.nanoTime();
    try {
      acquire(settings.maxInFlight(), start + settings.network().requestTimeout().toNanos());
    } finally {
      blockedNanos += System.nanoTime() - start;
    }
    inFlight.release(settings.maxInFlight());
    checkFailure();
  }

  /**
   * Sends the frame gathered for {@code worker}. The frame stays in {@link #pending} (so that
   * {@link #close()} releases it) until a permit of the global bound and room in the worker's
   * window are held: waiting for them may fail. Its batches stay held until the worker acknowledges
   * them.
   */
  private void send(WorkerId worker) {
    WorkerWindow window =
        windows.computeIfAbsent(worker, w -> new WorkerWindow(settings.maxInFlight()));
    long number = take(worker, window);
    PendingFrame frame = pending.remove(worker);
    if (frame == null) {
      window.free(number, Pace.UNKNOWN);
      inFlight.release();
      return;
    }
    CompletableFuture<Frame> sent;
    long sentAt = System.nanoTime();
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
      unanswered.incrementAndGet();
      handedOver = true;
      sent = pool.send(frame.address, meta.build(), body, settings.network().requestTimeout());
    } catch (RuntimeException | Error e) {
      // Not sent (out of direct memory, say): the task fails with this, holding nothing. A body
      // handed to the pool is the pool's; one it never saw is released here.
      if (handedOver) {
        unanswered.decrementAndGet();
      } else if (body != null) {
        body.release();
      }
      frame.parts.forEach(p -> p.batch().release());
      window.free(number, Pace.UNKNOWN);
      inFlight.release();
      throw e;
    }
    sent.whenComplete(
        (answer, error) -> {
          Pace pace = Pace.UNKNOWN;
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
              pace = answered(frame, response);
              if (pace == Pace.SLOW_DOWN) {
                slowDowns.incrementAndGet();
              }
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
            // The worker's window first: once awaitAnswers holds every permit, every window
            // is empty.
            window.free(number, pace);
            unanswered.decrementAndGet();
            inFlight.release();
          }
        });
  }

  /**
   * Releases acknowledged batches; hands the others to the revivals. Says whether the worker asked
   * to slow down: SLOW_DOWN parts were kept, like OK ones, so only the window hears of it.
   */
  private Pace answered(PendingFrame frame, PushResponse response) {
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
    return pace;
  }

  /**
   * Takes a permit of the global bound, then room in {@code worker}'s window, both within twice
   * faro.network.request.timeout; returns the frame's number in the worker's window. Holds nothing
   * when it throws.
   *
   * <p>Twice: the frames this one waits for time out by themselves after one timeout, counted from
   * when their connection sent them, which may be later than this wait began; their failure frees
   * the room and hands their batches to the revivals. Waiting one timeout only, a task could fail
   * on a silent worker just before the revive that would have saved it.
   */
  private long take(WorkerId worker, WorkerWindow window) {
    long start = System.nanoTime();
    long deadline = start + 2 * settings.network().requestTimeout().toNanos();
    try {
      acquire(1, deadline);
    } finally {
      blockedNanos += System.nanoTime() - start;
    }
    // With a global permit held, this worker has fewer than max.in.flight frames unanswered: a
    // wait here is the worker's back-off alone.
    long backOffStart = System.nanoTime();
    long number;
    try {
      number = window.take(deadline);
    } catch (InterruptedException e) {
      inFlight.release();
      Thread.currentThread().interrupt();
      throw new FaroException(
          ErrorCode.INTERNAL, "interrupted while pushing map " + mapId + " of " + shuffle, e);
    } finally {
      long waited = System.nanoTime() - backOffStart;
      backOffNanos += waited;
      blockedNanos += waited;
    }
    if (number < 0) {
      inFlight.release();
      throw noAnswer(" to worker " + worker + ", which asked to slow down,");
    }
    try {
      checkFailure();
    } catch (RuntimeException e) {
      window.free(number, Pace.UNKNOWN);
      inFlight.release();
      throw e;
    }
    return number;
  }

  /** The error of pushes that got no answer in time; {@code toWhom} says where they went. */
  private FaroException noAnswer(String toWhom) {
    return new FaroException(
        ErrorCode.TIMEOUT,
        "pushes of map "
            + mapId
            + " attempt "
            + attemptId
            + " of shuffle "
            + shuffle
            + toWhom
            + " got no answer within "
            + settings.network().requestTimeout().toMillis()
            + "ms (faro.network.request.timeout)");
  }

  /**
   * Takes {@code permits} of the global bound, waiting until {@code deadline} ({@link
   * System#nanoTime()}) at most; throws the first failure of an answer instead, holding nothing.
   */
  private void acquire(int permits, long deadline) {
    try {
      boolean acquired =
          inFlight.tryAcquire(permits, deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
      if (!acquired) {
        throw noAnswer("");
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

  /**
   * Time the task's thread spent waiting for answers: for permits of the global bound and for room
   * in a worker's window ({@link #backOffNanos()} included).
   */
  long blockedNanos() {
    return blockedNanos;
  }

  /**
   * Time the task's thread spent waiting for room in the window of a worker that asked it to slow
   * down; part of {@link #blockedNanos()}.
   */
  long backOffNanos() {
    return backOffNanos;
  }

  /** Answers that said SLOW_DOWN for some part of their frame. Any thread. */
  long slowDowns() {
    return slowDowns.get();
  }

  /** Frames sent and not answered yet. Any thread. */
  int unanswered() {
    return unanswered.get();
  }

  /** Frames sent to {@code worker} and not answered yet. Any thread. */
  int unanswered(WorkerId worker) {
    WorkerWindow window = windows.get(worker);
    return window == null ? 0 : window.unanswered();
  }

  /**
   * Frames {@code worker} may have unanswered now: max.in.flight until it asks to slow down. Any
   * thread.
   */
  int window(WorkerId worker) {
    WorkerWindow window = windows.get(worker);
    return window == null ? settings.maxInFlight() : window.limit();
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
