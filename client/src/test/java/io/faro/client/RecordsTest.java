package io.faro.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The client's small records refuse what no caller means. */
class RecordsTest {
  @Test
  void aMapAttemptHasNoNegativeIds() {
    assertThat(new MapAttempt(3, 1)).hasToString("map 3 attempt 1");
    assertThatThrownBy(() -> new MapAttempt(-1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("negative map id -1");
    assertThatThrownBy(() -> new MapAttempt(2, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("negative attempt id -1 of map 2");
  }

  @Test
  void aReadRangeIsOrderedAndMayBeEmpty() {
    assertThat(new ReadRange(2, 2, 0, 0).endPartition()).isEqualTo(2);
    assertThat(new ReadRange(0, 1, 0, Integer.MAX_VALUE).endMap()).isEqualTo(Integer.MAX_VALUE);
    assertThatThrownBy(() -> new ReadRange(-1, 1, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("negative start partition -1");
    assertThatThrownBy(() -> new ReadRange(3, 2, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("end partition 2 before start partition 3");
    assertThatThrownBy(() -> new ReadRange(0, 1, -1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("negative start map -1");
    assertThatThrownBy(() -> new ReadRange(0, 1, 2, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("end map 1 before start map 2");
  }
}
