package io.faro.client;

import static org.assertj.core.api.Assertions.assertThatCode;

import io.faro.common.batch.BatchFormat;
import org.junit.jupiter.api.Test;

/** The warm-up runs with every codec, and every class it names still exists. */
class ClientWarmUpTest {
  @Test
  void warmsUpWithEveryCodec() {
    for (BatchFormat.Codec codec : BatchFormat.Codec.values()) {
      assertThatCode(() -> ClientWarmUp.run(codec)).as("%s", codec).doesNotThrowAnyException();
    }
  }
}
