package io.faro.common.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EventuallyTest {
  @Test
  void returnsOnceTheConditionHolds() {
    AtomicInteger polls = new AtomicInteger();
    Eventually.await("the third poll", () -> polls.incrementAndGet() >= 3);
    assertThat(polls).hasValue(3);
  }

  @Test
  void returnsTheValueThatMetTheCondition() {
    AtomicInteger counter = new AtomicInteger();
    assertThat(Eventually.await("a counter past 4", counter::incrementAndGet, n -> n > 4))
        .isEqualTo(5);
  }

  @Test
  void aTimeoutNamesWhatWasAwaited() {
    assertThatThrownBy(
            () ->
                Eventually.await(
                    "a condition that never holds", Duration.ofMillis(50), () -> false))
        .isInstanceOf(AssertionError.class)
        .hasMessage("timed out after 50ms waiting for a condition that never holds");
  }

  @Test
  void aTimeoutNamesTheLastValueSeen() {
    AtomicInteger counter = new AtomicInteger();
    assertThatThrownBy(
            () ->
                Eventually.await(
                    "a negative count",
                    Duration.ofMillis(50),
                    () -> "count " + counter.incrementAndGet(),
                    s -> s.startsWith("-")))
        .isInstanceOf(AssertionError.class)
        .hasMessageStartingWith(
            "timed out after 50ms waiting for a negative count; last seen: count ")
        .hasMessageEndingWith("count " + counter.get());
  }
}
