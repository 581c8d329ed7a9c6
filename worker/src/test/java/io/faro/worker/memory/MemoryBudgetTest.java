package io.faro.worker.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.testing.Eventually;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MemoryBudgetTest {
  private final ScheduledExecutorService reliefThread =
      Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void tearDown() throws InterruptedException {
    reliefThread.shutdownNow();
    reliefThread.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void pausesPushConnectionsAtTheHighMarkAndResumesAtTheLowMark() {
    AtomicInteger reliefs = new AtomicInteger();
    MemoryBudget budget = new MemoryBudget(900, 700, reliefs::incrementAndGet, reliefThread);
    EmbeddedChannel before = new EmbeddedChannel();
    budget.register(before);

    budget.reserve(800);
    assertThat(budget.isPaused()).isFalse();
    assertThat(before.config().isAutoRead()).isTrue();

    budget.reserve(100);
    assertThat(budget.isPaused()).isTrue();
    assertThat(before.config().isAutoRead()).isFalse();
    Eventually.await("relief to run", reliefs::get, n -> n >= 1);
    // A connection opened while paused starts paused.
    EmbeddedChannel during = new EmbeddedChannel();
    budget.register(during);
    assertThat(during.config().isAutoRead()).isFalse();

    budget.release(150);
    assertThat(budget.isPaused()).as("750 is above the resume mark").isTrue();
    budget.release(50);
    assertThat(budget.isPaused()).isFalse();
    assertThat(before.config().isAutoRead()).isTrue();
    assertThat(during.config().isAutoRead()).isTrue();
    assertThat(budget.used()).isEqualTo(700);

    // The relief loop stops once resumed.
    int runs = reliefs.get();
    Eventually.await("the relief loop to notice the resume", () -> !budget.isPaused());
    budget.release(700);
    assertThat(budget.used()).isZero();
    assertThat(budget.peak()).as("the most held at once").isEqualTo(900);
    before.finishAndReleaseAll();
    during.finishAndReleaseAll();
    assertThat(runs).isPositive();
  }

  @Test
  void aboveTheSlowDownMarkPushesAreAskedToSlowDownAndBuffersAreFlushed() throws Exception {
    AtomicInteger reliefs = new AtomicInteger();
    // Resume at 700, pause at 900: the slow-down mark is halfway, at 800.
    MemoryBudget budget = new MemoryBudget(900, 700, reliefs::incrementAndGet, reliefThread);
    budget.reserve(800);
    assertThat(budget.shouldSlowDown()).as("at the slow-down mark").isFalse();
    assertThat(reliefs.get()).isZero();
    budget.reserve(1);
    assertThat(budget.shouldSlowDown()).as("above it, before any pause").isTrue();
    assertThat(budget.isPaused()).isFalse();
    // Half-full buffers must not hold the count above the mark for good: relief flushes them.
    Eventually.await("relief above the slow-down mark", () -> reliefs.get() > 0);
    budget.release(101);
    assertThat(budget.shouldSlowDown()).isFalse();
    // The loop stops at its next turn below the mark: after that, no more reliefs. What is checked
    // is an absence, so only elapsed time can show it: three turns to settle, three to watch.
    Thread.sleep(3 * MemoryBudget.RELIEF_INTERVAL_MS);
    int settled = reliefs.get();
    Thread.sleep(3 * MemoryBudget.RELIEF_INTERVAL_MS);
    assertThat(reliefs.get()).as("no relief below the mark").isEqualTo(settled);
    assertThat(budget.pauses()).isZero();
  }

  @Test
  void pausesAreCountedWithTheirTime() {
    MemoryBudget budget = new MemoryBudget(900, 700, () -> {}, reliefThread);
    budget.reserve(900);
    assertThat(budget.isPaused()).isTrue();
    assertThat(budget.shouldSlowDown()).isTrue();
    budget.release(300);
    assertThat(budget.isPaused()).isFalse();
    assertThat(budget.shouldSlowDown()).isFalse();
    budget.reserve(300);
    budget.release(300);
    assertThat(budget.pauses()).isEqualTo(2);
    assertThat(budget.pausedNanos()).isPositive();
  }

  @Test
  void reliefRepeatsWhileStillPaused() {
    AtomicInteger reliefs = new AtomicInteger();
    MemoryBudget budget = new MemoryBudget(100, 50, reliefs::incrementAndGet, reliefThread);
    budget.reserve(100);
    Eventually.await("relief to run several times", reliefs::get, n -> n >= 3);
    budget.release(100);
    assertThat(budget.isPaused()).isFalse();
  }

  @Test
  void aConnectionCarryingForwardsFromAPrimaryIsNeverPaused() {
    MemoryBudget budget = new MemoryBudget(900, 700, () -> {}, reliefThread);
    EmbeddedChannel clients = new EmbeddedChannel();
    EmbeddedChannel forwards = new EmbeddedChannel();
    budget.register(clients);
    budget.register(forwards);
    budget.reserve(950);
    assertThat(forwards.config().isAutoRead()).isFalse();

    // Its first forwarded frame: the peer's primary waits for this worker's answer.
    budget.exemptForwards(forwards);

    assertThat(forwards.config().isAutoRead()).isTrue();
    assertThat(clients.config().isAutoRead()).isFalse();
    budget.release(300);
    budget.reserve(300);
    assertThat(budget.isPaused()).isTrue();
    assertThat(forwards.config().isAutoRead()).as("paused again, forwards still read").isTrue();
    assertThat(clients.config().isAutoRead()).isFalse();
    clients.finishAndReleaseAll();
    forwards.finishAndReleaseAll();
  }
}
