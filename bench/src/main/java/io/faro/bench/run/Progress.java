package io.faro.bench.run;

import static java.util.Objects.requireNonNull;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Prints a line every {@link #INTERVAL_SECONDS} seconds while a run goes on: the phase, the
 * megabytes done of the phase's total and the rate over the last interval. Workers of a phase add
 * bytes from any thread; one daemon thread prints.
 */
public final class Progress implements AutoCloseable {
  static final int INTERVAL_SECONDS = 2;
  private static final double MB = 1 << 20;

  private final PrintWriter out;
  private final ScheduledExecutorService printer;
  private final LongAdder done = new LongAdder();
  // Written by the run's main thread, read by the printer.
  private volatile String phase = "starting";
  private volatile long phaseTotal;
  private volatile long phaseStartNanos = System.nanoTime();
  // Confined to the printer thread.
  private String lastPhase;
  private long lastDone;
  private long lastNanos = System.nanoTime();

  public Progress(PrintWriter out) {
    this.out = requireNonNull(out, "out is null");
    this.printer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "faro-bench-progress");
              t.setDaemon(true);
              return t;
            });
    printer.scheduleAtFixedRate(this::print, INTERVAL_SECONDS, INTERVAL_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * Starts counting {@code phase}, whose work is {@code totalBytes} (0 when not counted in bytes).
   */
  public void phase(String phase, long totalBytes) {
    this.phaseTotal = totalBytes;
    this.phaseStartNanos = System.nanoTime();
    this.phase = requireNonNull(phase, "phase is null");
    done.reset();
  }

  public void add(long bytes) {
    done.add(bytes);
  }

  private void print() {
    long now = System.nanoTime();
    long bytes = done.sum();
    if (!phase.equals(lastPhase)) {
      // A new phase: its rate counts from its own start.
      lastPhase = phase;
      lastDone = 0;
      lastNanos = phaseStartNanos;
    }
    double seconds = (now - lastNanos) / 1e9;
    double rate = bytes >= lastDone && seconds > 0 ? (bytes - lastDone) / MB / seconds : 0;
    lastDone = bytes;
    lastNanos = now;
    long total = phaseTotal;
    if (total > 0) {
      out.printf(
          Locale.ROOT,
          "  %-7s %9.1f of %9.1f MB  %8.1f MB/s%n",
          phase,
          bytes / MB,
          total / MB,
          rate);
    } else {
      out.printf(Locale.ROOT, "  %-7s %5.1f s%n", phase, (now - phaseStartNanos) / 1e9);
    }
    out.flush();
  }

  @Override
  public void close() {
    printer.shutdownNow();
  }
}
