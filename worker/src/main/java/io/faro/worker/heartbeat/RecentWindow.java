package io.faro.worker.heartbeat;

import java.util.ArrayDeque;

/**
 * The growth of a few cumulative counts over the last {@code samples} heartbeats: what "recent"
 * means in what a worker reports (each heartbeat adds one sample). Confined to the heartbeat's
 * caller, but synchronized, since an out-of-turn heartbeat (a graceful stop's) may come from
 * another thread.
 */
final class RecentWindow {
  private final int samples;
  private final ArrayDeque<long[]> kept = new ArrayDeque<>();

  RecentWindow(int samples) {
    if (samples < 1) {
      throw new IllegalArgumentException("samples must be positive: " + samples);
    }
    this.samples = samples;
  }

  /**
   * Adds the counts {@code now} and returns how much each grew since the oldest sample kept (all of
   * {@code now} at the first call, counts since the start).
   */
  synchronized long[] add(long[] now) {
    long[] oldest = kept.isEmpty() ? new long[now.length] : kept.peekFirst();
    long[] growth = new long[now.length];
    for (int i = 0; i < now.length; i++) {
      growth[i] = Math.max(0, now[i] - oldest[i]);
    }
    kept.addLast(now.clone());
    if (kept.size() > samples) {
      kept.removeFirst();
    }
    return growth;
  }
}
