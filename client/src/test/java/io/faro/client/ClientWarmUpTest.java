package io.faro.client;

import static org.assertj.core.api.Assertions.assertThatCode;

import org.junit.jupiter.api.Test;

/** The warm-up runs with and without compression, and every class it names still exists. */
class ClientWarmUpTest {
  @Test
  void warmsUpWithAndWithoutCompression() {
    assertThatCode(() -> ClientWarmUp.run(true)).doesNotThrowAnyException();
    assertThatCode(() -> ClientWarmUp.run(false)).doesNotThrowAnyException();
  }
}
