package io.faro.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import org.junit.jupiter.api.Test;

/** The engine's shuffle id: validated, and written as a generation is. */
class EngineShuffleIdTest {
  @Test
  void refusesNoAppAndANegativeId() {
    assertThatThrownBy(() -> new EngineShuffleId(null, 0))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("app is null");
    assertThatThrownBy(() -> new EngineShuffleId(new AppId("app"), -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("negative engine shuffle id -1");
  }

  @Test
  void readsAsTheGenerationOfTheSameNumber() {
    AppId app = new AppId("app");
    assertThat(new EngineShuffleId(app, 3)).hasToString(new ShuffleId(app, 3).toString());
  }
}
