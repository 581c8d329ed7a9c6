package io.faro.client.driver;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How long each phase of a shuffle's life took on this driver ({@link ShuffleTimeline.Phase}), over
 * every shuffle so far: a histogram per phase with four buckets per doubling from 1 microsecond to
 * about 36 minutes (longer times count in the last bucket), so that a quantile read from it is
 * within 19% of the true value. Fixed size whatever the number of shuffles; thread-safe, lock-free
 * (a quantile read while a shuffle is added may see it in the count and not yet in its bucket, and
 * answer the last bucket's bound).
 */
public final class ShufflePhaseStats {
  private static final int PER_DOUBLING = 4;

  /** The last bucket's bound is 2^((BUCKETS - 1) / 4) us: about 2,150 s. */
  private static final int BUCKETS = 31 * PER_DOUBLING + 1;

  private static final ShuffleTimeline.Phase[] PHASES = ShuffleTimeline.Phase.values();

  private final AtomicLongArray counts = new AtomicLongArray(PHASES.length * BUCKETS);
  private final AtomicLongArray totals = new AtomicLongArray(PHASES.length);

  /** Adds {@code phases} of {@code timeline}, those of them that are complete. */
  void add(ShuffleTimeline timeline, ShuffleTimeline.Phase... phases) {
    for (ShuffleTimeline.Phase p : phases) {
      long nanos = timeline.nanos(p);
      if (nanos >= 0) {
        counts.incrementAndGet(p.ordinal() * BUCKETS + bucket(nanos));
        totals.incrementAndGet(p.ordinal());
      }
    }
  }

  static int bucket(long nanos) {
    double micros = Math.max(1, nanos / 1e3);
    int b = (int) Math.ceil(Math.log(micros) / Math.log(2) * PER_DOUBLING);
    return Math.min(BUCKETS - 1, Math.max(0, b));
  }

  /** The upper bound, in milliseconds, of bucket {@code b}. */
  static double upperMillis(int b) {
    return Math.pow(2, (double) b / PER_DOUBLING) / 1e3;
  }

  /** Forgets everything counted so far (a benchmark's warm-up). */
  public void clear() {
    for (int i = 0; i < counts.length(); i++) {
      counts.set(i, 0);
    }
    for (int i = 0; i < totals.length(); i++) {
      totals.set(i, 0);
    }
  }

  /** Shuffles that completed {@code phase} (its label, e.g. "placement"). */
  public long count(String phase) {
    return totals.get(phase(phase).ordinal());
  }

  /**
   * The {@code q} quantile of {@code phase} in milliseconds (the upper bound of its bucket), or NaN
   * if no shuffle completed it.
   */
  public double quantileMillis(String phase, double q) {
    ShuffleTimeline.Phase p = phase(phase);
    long total = totals.get(p.ordinal());
    if (total == 0) {
      return Double.NaN;
    }
    long rank = Math.max(1, (long) Math.ceil(q * total));
    long seen = 0;
    for (int b = 0; b < BUCKETS; b++) {
      seen += counts.get(p.ordinal() * BUCKETS + b);
      if (seen >= rank) {
        return upperMillis(b);
      }
    }
    return upperMillis(BUCKETS - 1);
  }

  /** The phases' labels, in the order of a shuffle's life. */
  public static List<String> phases() {
    return Arrays.stream(PHASES).map(p -> p.label).toList();
  }

  /** Medians and 99th percentiles of every phase some shuffle completed, for a log line. */
  public String describe() {
    Map<String, String> parts = new LinkedHashMap<>();
    for (ShuffleTimeline.Phase p : PHASES) {
      if (totals.get(p.ordinal()) > 0) {
        parts.put(
            p.label,
            String.format(
                Locale.ROOT,
                "p50 %.2f p99 %.2f ms",
                quantileMillis(p.label, 0.5),
                quantileMillis(p.label, 0.99)));
      }
    }
    return parts.isEmpty() ? "no shuffle" : parts.toString();
  }

  private static ShuffleTimeline.Phase phase(String label) {
    for (ShuffleTimeline.Phase p : PHASES) {
      if (p.label.equals(label)) {
        return p;
      }
    }
    throw new IllegalArgumentException("no phase " + label + "; phases: " + phases());
  }
}
