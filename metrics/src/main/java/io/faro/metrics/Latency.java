package io.faro.metrics;

import com.codahale.metrics.LockFreeExponentiallyDecayingReservoir;
import com.codahale.metrics.Metric;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * How long one kind of operation takes: a Dropwizard {@link Timer} (quantiles over a decaying
 * sample that favours the last five minutes, lock-free on the recording side) plus the total time,
 * which the timer does not keep and which {@code rate(x_sum) / rate(x_count)} needs for a mean.
 *
 * <p>A latency built while timing is off ({@code faro.metrics.latency.enabled false}) records
 * nothing and {@link #start} reads no clock.
 */
public final class Latency implements Metric {
  private static final double NANOS_PER_SECOND = TimeUnit.SECONDS.toNanos(1);

  private final Timer timer = new Timer(LockFreeExponentiallyDecayingReservoir.builder().build());
  private final LongAdder totalNanos = new LongAdder();

  Latency() {}

  /** A start time to hand to {@link #stop}. */
  public long start() {
    return System.nanoTime();
  }

  /** Records the time since {@code start} (from {@link #start}). */
  public void stop(long start) {
    record(System.nanoTime() - start);
  }

  /** Records one operation that took {@code nanos}. */
  public void record(long nanos) {
    if (nanos >= 0) {
      timer.update(nanos, TimeUnit.NANOSECONDS);
      totalNanos.add(nanos);
    }
  }

  /** Operations recorded. */
  public long count() {
    return timer.getCount();
  }

  SummarySnapshot.SummaryDataPointSnapshot snapshot(Labels labels) {
    Snapshot s = timer.getSnapshot();
    return SummarySnapshot.SummaryDataPointSnapshot.builder()
        .labels(labels)
        .quantiles(
            Quantiles.builder()
                .quantile(0.5, s.getMedian() / NANOS_PER_SECOND)
                .quantile(0.9, s.getValue(0.9) / NANOS_PER_SECOND)
                .quantile(0.99, s.get99thPercentile() / NANOS_PER_SECOND)
                .build())
        .count(timer.getCount())
        .sum(totalNanos.sum() / NANOS_PER_SECOND)
        .build();
  }
}
