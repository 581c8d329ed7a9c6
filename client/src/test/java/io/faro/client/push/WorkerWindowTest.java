package io.faro.client.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One worker's window on its own: a SLOW_DOWN halves it once per window of frames, never below one
 * frame; answers that keep up grow it by one per window's worth, up to its start; a frame without
 * an answer changes nothing; a full window makes the task wait until its deadline.
 */
class WorkerWindowTest {
  private static long now() {
    return System.nanoTime();
  }

  @Test
  void aFullWindowWaitsUntilItsDeadlineAndAnAnswerMakesRoom() throws Exception {
    WorkerWindow window = new WorkerWindow(2);
    assertThat(window.take(now())).isZero();
    assertThat(window.take(now())).isEqualTo(1);
    assertThat(window.unanswered()).isEqualTo(2);
    long start = now();
    assertThat(window.take(start + 50_000_000L)).as("no room before the deadline").isEqualTo(-1);
    assertThat(now() - start).isGreaterThanOrEqualTo(50_000_000L);

    window.free(0, Pace.UNKNOWN);
    assertThat(window.take(now())).isEqualTo(2);
    assertThat(window.limit()).as("an answer of unknown pace changes nothing").isEqualTo(2);
  }

  @Test
  void framesSentBeforeTheWindowHalvedNeitherHalveItAgainNorGrowIt() throws Exception {
    WorkerWindow window = new WorkerWindow(8);
    List<Long> numbers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      numbers.add(window.take(now()));
    }
    window.free(numbers.get(0), Pace.SLOW_DOWN);
    assertThat(window.limit()).isEqualTo(4);
    for (int i = 1; i < 8; i++) {
      window.free(numbers.get(i), i % 2 == 0 ? Pace.SLOW_DOWN : Pace.KEPT_UP);
    }
    assertThat(window.limit()).isEqualTo(4);
    assertThat(window.unanswered()).isZero();

    // A frame sent after the halving halves it again.
    window.free(window.take(now()), Pace.SLOW_DOWN);
    assertThat(window.limit()).isEqualTo(2);
  }

  @Test
  void slowDownsStopAtOneFrameAndKeptUpAnswersGrowItBackToItsStart() throws Exception {
    WorkerWindow window = new WorkerWindow(4);
    List<Integer> limits = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      window.free(window.take(now()), Pace.SLOW_DOWN);
      limits.add(window.limit());
    }
    assertThat(limits).containsExactly(2, 1, 1, 1);
    assertThat(WorkerWindow.MIN_WINDOW).isEqualTo(1);

    limits.clear();
    for (int i = 0; i < 8; i++) {
      window.free(window.take(now()), Pace.KEPT_UP);
      limits.add(window.limit());
    }
    assertThat(limits).containsExactly(2, 2, 3, 3, 3, 4, 4, 4);
  }
}
