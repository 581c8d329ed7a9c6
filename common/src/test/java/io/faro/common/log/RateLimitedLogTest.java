package io.faro.common.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.testing.RecordingLogger;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimitedLogTest {
  private static final long SECOND = 1_000_000_000L;

  private enum Kind {
    CORRUPT_FRAME,
    RESET
  }

  private final AtomicLong clock = new AtomicLong();
  private final RecordingLogger logger = new RecordingLogger();
  private final RateLimitedLog<Kind> log =
      new RateLimitedLog<>(logger, Kind.class, 2, Duration.ofSeconds(10), clock::get);

  @Test
  void aFloodOfOneKindIsCutToTheLimitAndSummedUpInTheNextLine() {
    for (int i = 0; i < 30_000; i++) {
      log.warn(Kind.CORRUPT_FRAME, "closing connection from {}: {}", "/10.0.0.9:" + i, "bad frame");
    }
    clock.addAndGet(10 * SECOND);
    log.warn(Kind.CORRUPT_FRAME, "closing connection from {}: {}", "/10.0.0.9:1", "bad frame");

    assertThat(logger.lines())
        .containsExactly(
            "WARN closing connection from /10.0.0.9:0: bad frame",
            "WARN closing connection from /10.0.0.9:1: bad frame",
            "WARN closing connection from /10.0.0.9:1: bad frame (and 29998 more like it in the last 10 s)");
    assertThat(log.suppressed(Kind.CORRUPT_FRAME)).isEqualTo(29_998);
    assertThat(log.suppressed()).isEqualTo(29_998);
  }

  @Test
  void eachKindHasItsOwnBudget() {
    for (int i = 0; i < 5; i++) {
      log.warn(Kind.CORRUPT_FRAME, "corrupt {}", i);
    }
    log.warn(Kind.RESET, "reset");

    assertThat(logger.lines()).containsExactly("WARN corrupt 0", "WARN corrupt 1", "WARN reset");
    assertThat(log.suppressed(Kind.RESET)).isZero();
    assertThat(log.suppressed()).isEqualTo(3);
  }

  @Test
  void theSummaryGoesBeforeATrailingThrowable() {
    IllegalStateException error = new IllegalStateException("boom");
    for (int i = 0; i < 3; i++) {
      log.warn(Kind.RESET, "request #{} failed", i, error);
    }
    clock.addAndGet(11 * SECOND);
    log.warn(Kind.RESET, "request #{} failed", 3, error);

    assertThat(logger.lines())
        .containsExactly(
            "WARN request #0 failed",
            "WARN request #1 failed",
            "WARN request #3 failed (and 1 more like it in the last 11 s)");
    assertThat(logger.throwables()).containsExactly(error, error, error);
  }

  @Test
  void describesTheTimeSinceThePreviousLine() {
    assertThat(RateLimitedLog.describe(850_000_000L)).isEqualTo("850 ms");
    assertThat(RateLimitedLog.describe(10 * SECOND)).isEqualTo("10 s");
    assertThat(RateLimitedLog.describe(3 * 3600 * SECOND)).isEqualTo("180 min");
  }
}
