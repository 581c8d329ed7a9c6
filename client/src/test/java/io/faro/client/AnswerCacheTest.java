package io.faro.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The executor's shared answers: asked once per key, asked again only after a failure. */
class AnswerCacheTest {
  private final AtomicInteger asks = new AtomicInteger();

  private CompletableFuture<String> ask(String key) {
    asks.incrementAndGet();
    return CompletableFuture.completedFuture(key + "#" + asks.get());
  }

  @Test
  void callersShareOneAnswerPerKeyUntilItIsDropped() {
    AnswerCache<String, String> cache = new AnswerCache<>(Duration.ofSeconds(5));
    assertThat(cache.ifAsked("a", "a")).as("nobody asked yet").isNull();
    assertThat(cache.get("a", this::ask, "a")).isEqualTo("a#1");
    assertThat(cache.get("a", this::ask, "a")).isEqualTo("a#1");
    assertThat(cache.ifAsked("a", "a")).isEqualTo("a#1");
    assertThat(cache.get("b", this::ask, "b")).isEqualTo("b#2");

    cache.removeIf(k -> k.equals("a"));
    assertThat(cache.ifAsked("a", "a")).isNull();
    assertThat(cache.get("a", this::ask, "a")).isEqualTo("a#3");
    assertThat(cache.get("b", this::ask, "b")).isEqualTo("b#2");
  }

  @Test
  void aFailedOrLateAnswerIsDroppedSoThatTheNextCallerAsksAgain() {
    AnswerCache<String, String> cache = new AnswerCache<>(Duration.ofMillis(50));
    assertThatThrownBy(
            () ->
                cache.get(
                    "a",
                    k ->
                        CompletableFuture.failedFuture(
                            new FaroException(ErrorCode.CONNECTION_FAILED, "no driver")),
                    "a"))
        .isInstanceOf(FaroException.class);
    assertThat(cache.get("a", this::ask, "a")).isEqualTo("a#1");

    CompletableFuture<String> never = new CompletableFuture<>();
    assertThatThrownBy(() -> cache.get("b", k -> never, "the answer of b"))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT))
        .hasMessageContaining("the answer of b");
    assertThat(cache.ifAsked("b", "b")).isNull();
  }
}
