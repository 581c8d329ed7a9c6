package io.faro.common.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

class LogThrottleTest {
  private static final long SECOND = 1_000_000_000L;

  private final AtomicLong clock = new AtomicLong(123 * SECOND);
  private final LogThrottle throttle = new LogThrottle(3, Duration.ofSeconds(10), clock::get);

  @Test
  void allowsTheLimitPerIntervalAndCountsTheRest() {
    for (int i = 0; i < 3; i++) {
      assertThat(throttle.acquire().log()).as("line %d", i).isTrue();
    }
    for (int i = 0; i < 1234; i++) {
      assertThat(throttle.acquire()).isSameAs(LogThrottle.SUPPRESSED);
    }
    assertThat(throttle.suppressedTotal()).isEqualTo(1234);
  }

  @Test
  void theFirstLineOfTheNextIntervalSaysHowManyWereSuppressedAndSinceWhen() {
    throttle.acquire();
    throttle.acquire();
    clock.addAndGet(2 * SECOND);
    throttle.acquire(); // the third and last line of the interval, 2 s in
    for (int i = 0; i < 1234; i++) {
      throttle.acquire();
    }
    clock.addAndGet(8 * SECOND); // 10 s after the first: a new interval

    LogThrottle.Decision next = throttle.acquire();

    assertThat(next.log()).isTrue();
    assertThat(next.suppressedBefore()).isEqualTo(1234);
    assertThat(next.nanosSincePrevious()).isEqualTo(8 * SECOND);
    assertThat(throttle.acquire().suppressedBefore()).as("counted once").isZero();
    assertThat(throttle.suppressedTotal()).isEqualTo(1234);
  }

  @Test
  void aQuietKindLogsEveryLine() {
    for (int i = 0; i < 100; i++) {
      LogThrottle.Decision d = throttle.acquire();
      assertThat(d.log()).isTrue();
      assertThat(d.suppressedBefore()).isZero();
      clock.addAndGet(5 * SECOND);
    }
    assertThat(throttle.suppressedTotal()).isZero();
  }

  @Test
  void aClockThatSeemsToGoBackDoesNotReopenTheWindow() {
    for (int i = 0; i < 3; i++) {
      throttle.acquire();
    }
    clock.addAndGet(-SECOND);
    assertThat(throttle.acquire().log()).isFalse();
  }

  @Test
  void threadsRacingNeverLogMoreThanTheLimitAndLoseNoCount() throws InterruptedException {
    LogThrottle shared = new LogThrottle(50, Duration.ofHours(1), clock::get);
    LongAdder logged = new LongAdder();
    LongAdder reported = new LongAdder();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < 10_000; i++) {
                  LogThrottle.Decision d = shared.acquire();
                  if (d.log()) {
                    logged.increment();
                    reported.add(d.suppressedBefore());
                  }
                }
              });
      thread.start();
      threads.add(thread);
    }
    go.countDown();
    for (Thread thread : threads) {
      thread.join();
    }

    assertThat(logged.sum()).isEqualTo(50);
    assertThat(shared.suppressedTotal()).isEqualTo(40_000 - 50);
    // One more interval: its first line reports what the racing threads left unreported.
    clock.addAndGet(3600 * SECOND);
    reported.add(shared.acquire().suppressedBefore());
    assertThat(reported.sum()).isEqualTo(40_000 - 50);
  }
}
