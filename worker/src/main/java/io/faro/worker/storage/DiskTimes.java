package io.faro.worker.storage;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one disk wrote and read since the worker started, and how long that took: the raw counts the
 * heartbeat turns into recent averages per MiB for the masters' disk-load-aware placement. Written
 * by the disk's flusher and reader threads; thread-safe.
 */
public final class DiskTimes {
  private final LongAdder writtenBytes = new LongAdder();
  private final LongAdder writeNanos = new LongAdder();

  /** Counts a write of {@code bytes} that took {@code nanos}. */
  public void wrote(long bytes, long nanos) {
    writtenBytes.add(bytes);
    writeNanos.add(Math.max(0, nanos));
  }

  public long writtenBytes() {
    return writtenBytes.sum();
  }

  public long writeNanos() {
    return writeNanos.sum();
  }
}
