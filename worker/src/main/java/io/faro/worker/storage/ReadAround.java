package io.faro.worker.storage;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the reader threads last read around in each run: a piece inside such a range is read alone.
 * Bounded: the oldest runs are forgotten first (their next piece is read around again). Each reader
 * thread reads around into a window of its own, outside the segment pool.
 */
final class ReadAround {
  private static final int MAX_RUNS = 4096;

  private final LinkedHashMap<Path, long[]> ranges =
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Path, long[]> eldest) {
          return size() > MAX_RUNS;
        }
      };
  private final ThreadLocal<ByteBuffer> windows = new ThreadLocal<>();

  synchronized boolean holds(Extent piece) {
    long[] range = ranges.get(piece.file());
    return range != null && range[0] <= piece.offset() && piece.end() <= range[1];
  }

  synchronized void read(Path run, long from, long to) {
    ranges.put(run, new long[] {from, to});
  }

  /** Grows {@code run}'s range from {@code [from, to)} to {@code [from, newTo)}, if still it. */
  synchronized void extend(Path run, long from, long to, long newTo) {
    long[] range = ranges.get(run);
    if (range != null && range[0] == from && range[1] == to) {
      range[1] = newTo;
    }
  }

  ByteBuffer window(int bytes) {
    ByteBuffer window = windows.get();
    if (window == null || window.capacity() < bytes) {
      window = ByteBuffer.allocateDirect(bytes);
      windows.set(window);
    }
    return window;
  }
}
