package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.MapAttempt;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The two bounds that hold back the frames of one map attempt, and how long the task's thread
 * waited for them. All workers together may have faro.client.push.max.in.flight frames of the task
 * unanswered; each worker, besides, has its own {@link WorkerWindow}. A frame goes once it holds a
 * permit of the first and room in the second (a {@link Slot}), and gives both back when it is
 * answered or could not be sent, on every path.
 *
 * <p>The task's thread waits for both at most twice faro.network.request.timeout in all: every
 * frame sent before the wait is answered or timed out by then, and its revive under way. Other
 * workers keep their whole window, but the task has one thread: while it waits for room in a slowed
 * worker's window, it sends to no one (a frame gathers for one worker at a time, so a task pushes
 * no faster than its slowest worker takes).
 *
 * <p>Threads: {@link #take}, {@link #awaitAll} and the times waited on the task's thread; a slot is
 * given back on any thread; the counts of frames and windows are read on any thread.
 */
final class PushBounds {
  /** Room for one frame: a permit of the global bound, and frame {@code number} of its window. */
  record Slot(WorkerWindow window, long number) {}

  private final ShuffleId shuffle;
  private final int mapId;
  private final int attemptId;
  private final ClientSettings settings;
  private final Runnable checkFailure;
  private final Semaphore inFlight;
  // Read by tests and diagnostics on other threads; changed on the task's thread only.
  private final Map<WorkerId, WorkerWindow> windows = new ConcurrentHashMap<>();
  private final AtomicInteger unanswered = new AtomicInteger();
  private long blockedNanos;
  private long backOffNanos;

  /**
   * @param checkFailure throws the first failure an answer met, if any: a wait that ends with one
   *     throws it, holding nothing
   */
  PushBounds(
      ShuffleId shuffle, MapAttempt attempt, ClientSettings settings, Runnable checkFailure) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.mapId = attempt.mapId();
    this.attemptId = attempt.attemptId();
    this.settings = requireNonNull(settings, "settings is null");
    this.checkFailure = requireNonNull(checkFailure, "checkFailure is null");
    this.inFlight = new Semaphore(settings.maxInFlight());
  }

  /**
   * Takes a permit of the global bound, then room in {@code worker}'s window, both within twice
   * faro.network.request.timeout. Holds nothing when it throws.
   *
   * <p>Twice: the frames this one waits for time out by themselves after one timeout, counted from
   * when their connection sent them, which may be later than this wait began; their failure frees
   * the room and hands their batches to the revivals. Waiting one timeout only, a task could fail
   * on a silent worker just before the revive that would have saved it.
   */
  Slot take(WorkerId worker) {
    WorkerWindow window =
        windows.computeIfAbsent(worker, w -> new WorkerWindow(settings.maxInFlight()));
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
    Slot slot = new Slot(window, number);
    try {
      checkFailure.run();
    } catch (RuntimeException e) {
      unsent(slot, false);
      throw e;
    }
    return slot;
  }

  /**
   * The frame of a slot is being handed to the connection: it counts as unanswered until its slot
   * is given back, answered or unsent.
   */
  void handingOver() {
    unanswered.incrementAndGet();
  }

  /** Gives back the slot of a frame whose answer (or failure) came and said {@code pace}. */
  void answered(Slot slot, Pace pace) {
    // The worker's window first: once awaitAll holds every permit, every window is empty.
    slot.window().free(slot.number(), pace);
    unanswered.decrementAndGet();
    inFlight.release();
  }

  /**
   * Gives back the slot of a frame that was never sent; {@code handedOver} when it was already
   * counted ({@link #handingOver}).
   */
  void unsent(Slot slot, boolean handedOver) {
    if (handedOver) {
      unanswered.decrementAndGet();
    }
    slot.window().free(slot.number(), Pace.UNKNOWN);
    inFlight.release();
  }

  /**
   * Waits until every frame sent was answered (holding, for a moment, every permit of the global
   * bound), within one faro.network.request.timeout.
   */
  void awaitAll() {
    long start = System.nanoTime();
    try {
      acquire(settings.maxInFlight(), start + settings.network().requestTimeout().toNanos());
    } finally {
      blockedNanos += System.nanoTime() - start;
    }
    inFlight.release(settings.maxInFlight());
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
      checkFailure.run();
    } catch (RuntimeException e) {
      inFlight.release(permits);
      throw e;
    }
  }

  /**
   * Time the task's thread spent waiting: for permits of the global bound and for room in a
   * worker's window ({@link #backOffNanos()} included).
   */
  long blockedNanos() {
    return blockedNanos;
  }

  /** Time the task's thread spent waiting for room in a worker's window; part of the above. */
  long backOffNanos() {
    return backOffNanos;
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

  /** Frames {@code worker} may have unanswered now. Any thread. */
  int window(WorkerId worker) {
    WorkerWindow window = windows.get(worker);
    return window == null ? settings.maxInFlight() : window.limit();
  }
}
