package io.faro.client.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The driver's phase histograms: quantiles within a bucket's width, phases from the timeline. */
class ShufflePhaseStatsTest {
  @Test
  void aQuantileIsTheUpperBoundOfItsBucketWithin19Percent() {
    for (long nanos : new long[] {1_000, 37_000, 450_000, 2_700_000, 8_000_000, 95_000_000}) {
      double upper = ShufflePhaseStats.upperMillis(ShufflePhaseStats.bucket(nanos));
      assertThat(upper).isGreaterThanOrEqualTo(nanos / 1e6);
      assertThat(upper).isLessThanOrEqualTo(nanos / 1e6 * 1.19);
    }
  }

  @Test
  void quantilesComeFromTheCountedPhasesOnly() throws Exception {
    ShufflePhaseStats stats = new ShufflePhaseStats();
    assertThat(stats.quantileMillis("commit", 0.5)).isNaN();
    for (int i = 0; i < 10; i++) {
      ShuffleTimeline t = new ShuffleTimeline();
      t.mark(ShuffleTimeline.Mark.COMMIT_STARTED);
      // The phase measured: nine of about 1 ms and one of at least 30 ms (the timeline reads
      // System.nanoTime, so the time must pass).
      Thread.sleep(i < 9 ? 1 : 30);
      t.mark(ShuffleTimeline.Mark.COMMITTED);
      // Not counted: only the phases asked for are.
      t.mark(ShuffleTimeline.Mark.FIRST_READ);
      stats.add(t, ShuffleTimeline.Phase.COMMIT);
    }
    assertThat(stats.count("commit")).isEqualTo(10);
    assertThat(stats.count("first_read")).isZero();
    assertThat(stats.quantileMillis("commit", 0.5)).isBetween(1.0, 1.19 * 25);
    assertThat(stats.quantileMillis("commit", 0.99)).isGreaterThanOrEqualTo(30.0);
    assertThat(stats.describe()).contains("commit=p50");
    stats.clear();
    assertThat(stats.count("commit")).isZero();
    assertThatThrownBy(() -> stats.count("nap")).hasMessageContaining("commit");
  }

  @Test
  void aPhaseWhoseEndCameFirstTakesNoTime() {
    ShuffleTimeline t = new ShuffleTimeline();
    assertThat(t.nanos(ShuffleTimeline.Phase.PLACEMENT_WAIT)).isEqualTo(-1);
    t.mark(ShuffleTimeline.Mark.PLACED);
    t.mark(ShuffleTimeline.Mark.FIRST_ASK);
    assertThat(t.nanos(ShuffleTimeline.Phase.PLACEMENT_WAIT)).isZero();
    assertThat(t.mark(ShuffleTimeline.Mark.PLACED)).isFalse();
    assertThat(t.describe()).isEqualTo("placement_wait 0.00 ms");
    assertThat(ShufflePhaseStats.upperMillis(0)).isCloseTo(0.001, within(1e-9));
  }
}
