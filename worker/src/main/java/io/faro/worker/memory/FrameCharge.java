package io.faro.worker.memory;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The memory one push frame holds. A frame's parts are slices of the buffers it was received in
 * (see io.faro.common.network.FrameDecoder), so those buffers stay in memory while any part of the
 * frame waits for its partition's flush. The budget is therefore charged the frame's full size when
 * it arrives and credited when its last part is released, not part by part: many small parts of one
 * frame, going to partitions that flush at different times, would otherwise look far smaller than
 * what they pin.
 *
 * <p>Thread-safe: parts are released on flusher threads and event loops.
 */
public final class FrameCharge {
  private final MemoryBudget budget;
  private final long bytes;
  private final AtomicInteger parts;

  /**
   * Charges {@code bytes} for a frame of {@code parts} parts (nothing for a frame without parts).
   */
  public FrameCharge(MemoryBudget budget, long bytes, int parts) {
    this.budget = requireNonNull(budget, "budget is null");
    this.bytes = bytes;
    this.parts = new AtomicInteger(parts);
    if (parts > 0) {
      budget.reserve(bytes);
    }
  }

  /** Called exactly once per part, when the part's bytes are released. */
  public void partReleased() {
    int left = parts.decrementAndGet();
    if (left == 0) {
      budget.release(bytes);
    } else if (left < 0) {
      throw new IllegalStateException("a part of a " + bytes + "-byte frame was released twice");
    }
  }
}
