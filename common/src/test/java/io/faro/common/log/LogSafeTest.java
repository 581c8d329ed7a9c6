package io.faro.common.log;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogSafeTest {
  @Test
  void ordinaryIdsAreReturnedAsTheyAre() {
    String id = "app-20240101010101-0001_1";
    assertThat(LogSafe.id(id)).isSameAs(id);
    assertThat(LogSafe.id("host-1.example.com:9100")).isEqualTo("host-1.example.com:9100");
    assertThat(LogSafe.id("ünïcødé-应用-😀")).isEqualTo("ünïcødé-应用-😀");
    assertThat(LogSafe.id(null)).isEqualTo("null");
  }

  @Test
  void aNewlineCannotForgeALogLine() {
    String forged =
        "app-1\n2024-01-01 00:00:00.000 INFO  [main] MasterServer - Master m1 granted admin";
    String safe = LogSafe.id(forged);

    assertThat(safe).doesNotContain("\n").startsWith("app-1?2024-01-01");
    assertThat(safe.lines()).hasSize(1);
  }

  @Test
  void everyControlAndLineBreakingCharacterIsReplaced() {
    String nasty = "a\rb\tc\u0000d\u001be[31m\u007ff\u0085g\u2028h\u2029i\u202ej\u2066k\ud800l";
    assertThat(LogSafe.id(nasty)).isEqualTo("a?b?c?d?e[31m?f?g?h?i?j?k?l");
  }

  @Test
  void aHugeIdIsCutAndSaysHowLongItWas() {
    String huge = "x".repeat(20_000);
    String safe = LogSafe.id(huge);

    assertThat(safe).startsWith("x".repeat(LogSafe.MAX_ID_LENGTH)).endsWith("…(20000 chars)");
    assertThat(safe).hasSize(LogSafe.MAX_ID_LENGTH + "…(20000 chars)".length());
  }

  @Test
  void aHugeIdOfNewlinesIsBothCutAndCleaned() {
    String safe = LogSafe.id("\n".repeat(20_000));
    assertThat(safe).isEqualTo("?".repeat(LogSafe.MAX_ID_LENGTH) + "…(20000 chars)");
  }

  @Test
  void theCutNeverSplitsASurrogatePair() {
    String id = "a".repeat(LogSafe.MAX_ID_LENGTH - 1) + "😀" + "b";
    String safe = LogSafe.id(id);

    assertThat(safe)
        .isEqualTo("a".repeat(LogSafe.MAX_ID_LENGTH - 1) + "…(" + id.length() + " chars)");
  }

  @Test
  void freeTextGetsALongerLimit() {
    String reason = "r".repeat(LogSafe.MAX_TEXT_LENGTH);
    assertThat(LogSafe.text(reason)).isSameAs(reason);
    assertThat(LogSafe.text(reason + "!"))
        .endsWith("…(" + (LogSafe.MAX_TEXT_LENGTH + 1) + " chars)");
  }
}
