package io.faro.client.push;

import java.util.concurrent.TimeUnit;

/**
 * How many frames of one map attempt one worker may have unanswered, and how many it has: a window
 * that follows the worker's back-pressure, growing by one and halving, as TCP's does. A worker
 * whose memory is above its slow-down mark answers SLOW_DOWN (and at its pause mark stops reading
 * push connections until flushes bring its memory down), so the task sends it fewer frames at once.
 *
 * <ul>
 *   <li>The window starts at faro.client.push.max.in.flight.
 *   <li>An answer with a SLOW_DOWN for any of its parts halves it, down to {@link #MIN_WINDOW}
 *       frame: never to none, so that a slowed worker still gets this task's data, one frame at a
 *       time. It halves at most once per window of frames: the answers to frames sent before it
 *       halved tell of the same overload, so they neither halve it again nor grow it.
 *   <li>Answers without a SLOW_DOWN (OK, splits, refusals: the worker read the frame and kept up)
 *       grow it by one frame per window's worth of them, up to max.in.flight: one more frame per
 *       round of answers, as TCP grows its window once it has seen congestion.
 *   <li>A frame that got no answer (a timeout, a lost connection, an error answer) changes nothing:
 *       what is wrong with that worker is the revivals' business.
 * </ul>
 *
 * <p>Frames sent to the worker are numbered, so that an answer can tell whether its frame left
 * before the window last halved. Guarded by its own monitor: the task's thread waits on it for
 * room, answer callbacks change it and wake the task.
 */
final class WorkerWindow {
  /** The smallest window a worker's SLOW_DOWN answers bring it to: one frame at a time. */
  static final int MIN_WINDOW = 1;

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
