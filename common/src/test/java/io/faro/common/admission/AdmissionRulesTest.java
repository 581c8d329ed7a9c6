package io.faro.common.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class AdmissionRulesTest {
  private static AppProfile app(String user, String queue, String name) {
    return new AppProfile(user, queue, name);
  }

  @Test
  void theFirstRuleThatMatchesDecidesAndNoMatchAdmits() {
    AdmissionRules rules =
        AdmissionRules.parse(
            "# operators' rules\n"
                + "deny user=guest        # nobody as guest\n"
                + "\n"
                + "admit queue=etl name=nightly-*\n"
                + "deny name=nightly-?\n",
            "admin: rollout");
    assertThat(rules.rules()).hasSize(3);
    assertThat(rules.refusal(app("guest", "etl", "nightly-1")))
        .hasValue("admission rule 1 'deny user=guest' (admin: rollout) refuses it");
    assertThat(rules.refusal(app("ann", "etl", "nightly-1"))).isEmpty();
    assertThat(rules.refusal(app("ann", "adhoc", "nightly-1")))
        .hasValue("admission rule 3 'deny name=nightly-?' (admin: rollout) refuses it");
    // '?' is one character.
    assertThat(rules.refusal(app("ann", "adhoc", "nightly-12"))).isEmpty();
    assertThat(rules.refusal(AppProfile.UNKNOWN)).isEmpty();
    assertThat(AdmissionRules.NONE.refusal(app("guest", "", ""))).isEmpty();
    // Written back as read, comments gone.
    assertThat(rules.text())
        .isEqualTo("deny user=guest\nadmit queue=etl name=nightly-*\ndeny name=nightly-?\n");
    assertThat(AdmissionRules.parse(rules.text(), "").rules()).isEqualTo(rules.rules());
  }

  @Test
  void aPercentageAdmitsAStableShareOfApplicationNames() {
    AdmissionRules tenPercent = AdmissionRules.parse("admit percent=10\ndeny\n", "");
    AdmissionRules twentyPercent = AdmissionRules.parse("admit percent=20\ndeny\n", "");
    List<String> names = IntStream.range(0, 2000).mapToObj(i -> "job-" + i).toList();
    List<String> ten =
        names.stream().filter(n -> tenPercent.refusal(app("u", "", n)).isEmpty()).toList();
    List<String> twenty =
        names.stream().filter(n -> twentyPercent.refusal(app("u", "", n)).isEmpty()).toList();
    assertThat(ten.size()).isBetween(150, 250);
    assertThat(twenty.size()).isBetween(330, 470);
    // Widening the rollout keeps every application that was in.
    assertThat(twenty).containsAll(ten);
    // The same name, the same answer, whoever asks: the bucket is CRC32C of the name, mod 100.
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update("nightly-sales".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(AdmissionRule.bucket("nightly-sales")).isEqualTo((int) (crc.getValue() % 100));
  }

  @Test
  void aNameGlobMatchesInLinearTimeWhateverTheName() {
    assertThat(AdmissionRule.globMatches("nightly-*-sales", "nightly-eu-sales")).isTrue();
    assertThat(AdmissionRule.globMatches("nightly-*-sales", "nightly-eu-salesx")).isFalse();
    assertThat(AdmissionRule.globMatches("a?c*", "abcdef")).isTrue();
    assertThat(AdmissionRule.globMatches("*", "")).isTrue();
    assertThat(AdmissionRule.globMatches("?", "")).isFalse();
    assertThat(AdmissionRule.globMatches("my?report", "my report")).isTrue();
    // A backtracking regex takes hours here; the matcher at most 1024 x 11 steps.
    long start = System.nanoTime();
    assertThat(AdmissionRule.globMatches("*-*-*-*-prod", "-".repeat(1024))).isFalse();
    assertThat(java.time.Duration.ofNanos(System.nanoTime() - start))
        .isLessThan(java.time.Duration.ofSeconds(1));
  }

  @Test
  void aLineThatIsNotARuleIsNamedWithWhatIsAllowed() {
    assertThatThrownBy(() -> AdmissionRules.parse("deny user=*", ""))
        .hasMessageContaining("an exact name (leave it out to match any; * is for limits)");
    assertThat(AdmissionRules.parse("limit\tuser=a shuffles=1", "").quotas()).hasSize(1);
    assertThatThrownBy(() -> AdmissionRules.parse("admit user=a\nallow user=b\n", ""))
        .hasMessageContaining("line 2")
        .hasMessageContaining("starts with admit or deny, not 'allow'");
    assertThatThrownBy(() -> AdmissionRules.parse("deny owner=b", ""))
        .hasMessageContaining("unknown condition 'owner'")
        .hasMessageContaining("user, queue, name and percent");
    assertThatThrownBy(() -> AdmissionRules.parse("admit percent=0", ""))
        .hasMessageContaining("percent must be in 1..100, not 0");
    assertThatThrownBy(() -> AdmissionRules.parse("admit percent=ten", ""))
        .hasMessageContaining("whole number");
    assertThatThrownBy(() -> AdmissionRules.parse("admit user=", ""))
        .hasMessageContaining("has no value");
    assertThatThrownBy(() -> AdmissionRules.parse("deny\n".repeat(1001), ""))
        .hasMessageContaining("1001 admission rules and limits, more than the 1000 allowed");
  }

  @Test
  void limitsAreReadWithTheRulesAndCountAnAppUnderItsUserOrQueue() {
    AdmissionRules rules =
        AdmissionRules.parse(
            "deny user=guest\n"
                + "limit user=* shuffles=200 bytes=2t   # each user\n"
                + "limit queue=adhoc partitions=1000000 bytes=1536m\n",
            "");
    assertThat(rules.rules()).hasSize(1);
    assertThat(rules.quotas())
        .containsExactly(
            new Quota(false, "*", 200, 0, 2L << 40),
            new Quota(true, "adhoc", 0, 1_000_000, 1536L << 20));
    assertThat(rules.text())
        .isEqualTo(
            "deny user=guest\n"
                + "limit user=* shuffles=200 bytes=2t\n"
                + "limit queue=adhoc partitions=1000000 bytes=1536m\n");
    assertThat(AdmissionRules.parse(rules.text(), "")).isEqualTo(rules);
    Quota eachUser = rules.quotas().get(0);
    Quota adhoc = rules.quotas().get(1);
    assertThat(eachUser.groupOf(app("ann", "etl", "x"))).isEqualTo("ann");
    assertThat(eachUser.groupOf(AppProfile.UNKNOWN)).as("no user: not counted").isNull();
    assertThat(adhoc.groupOf(app("ann", "adhoc", "x"))).isEqualTo("adhoc");
    assertThat(adhoc.groupOf(app("ann", "etl", "x"))).isNull();
    assertThat(eachUser.scope()).isEqualTo("each user");
    assertThat(adhoc.scope()).isEqualTo("queue adhoc");
  }

  @Test
  void aLimitThatIsNotOneIsNamed() {
    assertThatThrownBy(() -> AdmissionRules.parse("limit shuffles=3", ""))
        .hasMessageContaining("exactly one of user=U and queue=Q");
    assertThatThrownBy(() -> AdmissionRules.parse("limit user=a queue=b shuffles=3", ""))
        .hasMessageContaining("exactly one of user=U and queue=Q");
    assertThatThrownBy(() -> AdmissionRules.parse("limit user=a", ""))
        .hasMessageContaining("sets shuffles, partitions or bytes");
    assertThatThrownBy(() -> AdmissionRules.parse("limit user=a shuffles=-1", ""))
        .hasMessageContaining("shuffles must be a positive whole number, not -1");
    assertThatThrownBy(() -> AdmissionRules.parse("limit user=a bytes=2x", ""))
        .hasMessageContaining("bytes must be a positive size like 500g");
    assertThatThrownBy(() -> AdmissionRules.parse("limit user=a files=2", ""))
        .hasMessageContaining("unknown limit 'files'");
  }
}
