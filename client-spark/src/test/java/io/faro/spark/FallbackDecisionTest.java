package io.faro.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientOptions.FallbackPolicy;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.HostPort;
import io.faro.spark.FallbackDecision.Fallback;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** Which shuffles fall back, why, and what a job under policy never fails with instead. */
class FallbackDecisionTest {
  private static final List<HostPort> MASTERS = List.of(new HostPort("m1", 9097));

  @Test
  void policyAlwaysAnUnsafeSettingAndWidthDecideBeforeAnyMasterIsAsked() {
    assertThat(FallbackDecision.beforeMasters(FallbackPolicy.ALWAYS, null, 1, 100))
        .hasValueSatisfying(f -> assertThat(f.kind()).isEqualTo(FaroShuffleFallback.Kind.POLICY));
    // The policy goes first: an unsafe setting or a width says nothing more then.
    assertThat(FallbackDecision.beforeMasters(FallbackPolicy.ALWAYS, "unsafe", 1000, 100))
        .hasValueSatisfying(f -> assertThat(f.kind()).isEqualTo(FaroShuffleFallback.Kind.POLICY));
    assertThat(FallbackDecision.beforeMasters(FallbackPolicy.AUTO, "userClassPathFirst", 1, 100))
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FaroShuffleFallback.Kind.UNSAFE_SETTING);
              assertThat(f.reason()).isEqualTo("userClassPathFirst");
            });
    assertThat(FallbackDecision.beforeMasters(FallbackPolicy.NEVER, null, 101, 100))
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FaroShuffleFallback.Kind.PARTITIONS);
              assertThat(f.reason())
                  .isEqualTo("101 partitions, more than faro.client.fallback.max.partitions (100)");
            });
    assertThat(FallbackDecision.beforeMasters(FallbackPolicy.AUTO, null, 100, 100)).isEmpty();
    assertThat(FallbackDecision.beforeMasters(FallbackPolicy.NEVER, null, 100, 100)).isEmpty();
  }

  @Test
  void aRefusedRegistrationIsRefusedAndAnyOtherFailureIsUnreachableMasters() {
    FaroException refused = new FaroException(ErrorCode.ADMISSION_REFUSED, "denied by rule 2");
    Fallback f = FallbackDecision.notRegistered(refused);
    assertThat(f.kind()).isEqualTo(FaroShuffleFallback.Kind.REFUSED);
    assertThat(f.reason()).isEqualTo("denied by rule 2");
    assertThat(f.cause()).isSameAs(refused);

    assertThat(
            FallbackDecision.notRegistered(new FaroException(ErrorCode.TIMEOUT, "no answer"))
                .kind())
        .isEqualTo(FaroShuffleFallback.Kind.MASTERS_UNREACHABLE);
    assertThat(FallbackDecision.notRegistered(new IllegalStateException("boom")).kind())
        .isEqualTo(FaroShuffleFallback.Kind.MASTERS_UNREACHABLE);
  }

  @Test
  void unreachableMastersMakeNewShufflesFallBackUnderAutoOnly() {
    assertThat(FallbackDecision.afterHeartbeat(FallbackPolicy.AUTO, false, MASTERS))
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FaroShuffleFallback.Kind.MASTERS_UNREACHABLE);
              assertThat(f.reason()).contains("m1:9097").contains("faro.master.endpoints");
            });
    assertThat(FallbackDecision.afterHeartbeat(FallbackPolicy.AUTO, true, MASTERS)).isEmpty();
    // Under never the shuffle is placed anyway, and fails there if it must.
    assertThat(FallbackDecision.afterHeartbeat(FallbackPolicy.NEVER, false, MASTERS)).isEmpty();
  }

  @Test
  void aPlacementOverAQuotaIsQuotaWhereverItsCodeIsAndAnyOtherIsNotPlaced() {
    CompletionException wrapped =
        new CompletionException(new FaroException(ErrorCode.QUOTA_EXCEEDED, "queue q is full"));
    Fallback quota = FallbackDecision.notPlaced(wrapped);
    assertThat(quota.kind()).isEqualTo(FaroShuffleFallback.Kind.QUOTA);
    assertThat(quota.reason()).startsWith("over a quota of the Faro cluster: ");

    Fallback other =
        FallbackDecision.notPlaced(
            new FaroException(ErrorCode.NO_AVAILABLE_WORKERS, "no worker has room"));
    assertThat(other.kind()).isEqualTo(FaroShuffleFallback.Kind.NOT_PLACED);
    assertThat(other.reason()).isEqualTo("the Faro cluster did not place it: no worker has room");
  }

  @Test
  void underPolicyNeverTheJobFailsWithTheCodeOfItsReason() {
    record Case(FaroShuffleFallback.Kind kind, ErrorCode code) {}
    for (Case c :
        List.of(
            new Case(FaroShuffleFallback.Kind.PARTITIONS, ErrorCode.LIMIT_EXCEEDED),
            new Case(FaroShuffleFallback.Kind.REFUSED, ErrorCode.ADMISSION_REFUSED),
            new Case(FaroShuffleFallback.Kind.QUOTA, ErrorCode.QUOTA_EXCEEDED),
            new Case(FaroShuffleFallback.Kind.MASTERS_UNREACHABLE, ErrorCode.CONNECTION_FAILED),
            new Case(FaroShuffleFallback.Kind.NOT_PLACED, ErrorCode.CONNECTION_FAILED))) {
      RuntimeException cause = new IllegalStateException("underneath");
      FaroException refusal =
          FallbackDecision.refusal(7, new Fallback(c.kind(), "the reason", cause));
      assertThat(refusal.code()).as(c.kind().name()).isEqualTo(c.code());
      assertThat(refusal.getMessage())
          .contains("shuffle 7")
          .contains("spark.faro.client.fallback.policy is never")
          .endsWith("the reason");
      assertThat(refusal.getCause()).isSameAs(cause);
    }
  }
}
