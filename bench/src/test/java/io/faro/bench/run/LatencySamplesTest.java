package io.faro.bench.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class LatencySamplesTest {
  @Test
  void percentilesOfKnownSamples() {
    LatencySamples samples = new LatencySamples(1);
    for (int ms = 100; ms >= 1; ms--) {
      samples.record(ms * 1_000_000L);
    }

    assertThat(samples.summary()).isEqualTo(new LatencySummary(100, 50.0, 99.0));
  }

  @Test
  void staysBoundedAndRepresentativeBeyondItsCapacity() {
    LatencySamples first = new LatencySamples(2);
    LatencySamples second = new LatencySamples(3);
    for (int i = 0; i < 3 * LatencySamples.CAPACITY; i++) {
      first.record(i % 1000 * 1_000_000L);
      second.record(i % 1000 * 1_000_000L);
    }
    first.addAll(second);

    assertThat(first.count()).isEqualTo(6L * LatencySamples.CAPACITY);
    assertThat(first.percentileMillis(0.5)).isCloseTo(500, within(25.0));
    assertThat(first.percentileMillis(0.99)).isCloseTo(990, within(10.0));
  }

  @Test
  void noSamplesGiveZeros() {
    assertThat(new LatencySamples(1).summary()).isEqualTo(new LatencySummary(0, 0, 0));
  }
}
