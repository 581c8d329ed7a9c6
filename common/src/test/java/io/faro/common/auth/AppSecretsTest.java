package io.faro.common.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.id.AppId;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * App identities and their derived secrets: a registration's nonce comes from its token and says
 * nothing of it; each app, registration and cluster gets its own secret; an identity's name
 * survives the wire, and a malformed one is refused with a reason.
 */
class AppSecretsTest {
  private static final Secret CLUSTER = Secret.of("cluster-secret-0123456789abcdef");

  @Test
  void eachAppRegistrationAndClusterHasItsOwnSecret() {
    byte[] token = AppSecrets.token();
    String nonce = AppSecrets.nonce(token);
    assertThat(AppSecrets.isNonce(nonce)).isTrue();
    assertThat(AppSecrets.nonce(token)).as("the same token, the same nonce").isEqualTo(nonce);
    assertThat(AppSecrets.nonce(AppSecrets.token())).isNotEqualTo(nonce);

    AppId app = new AppId("app-1");
    byte[] secret = AppSecrets.derive(CLUSTER, app, nonce).toBytes();
    assertThat(AppSecrets.derive(CLUSTER, app, nonce).toBytes()).isEqualTo(secret);
    assertThat(AppSecrets.derive(CLUSTER, new AppId("app-2"), nonce).toBytes())
        .isNotEqualTo(secret);
    assertThat(AppSecrets.derive(CLUSTER, app, AppSecrets.nonce(AppSecrets.token())).toBytes())
        .isNotEqualTo(secret);
    assertThat(
            AppSecrets.derive(Secret.of("another-cluster-0123456789abcdef"), app, nonce).toBytes())
        .isNotEqualTo(secret);
    // The secret is not the token, nor made of the nonce alone.
    assertThat(Arrays.equals(secret, token)).isFalse();
  }

  @Test
  void aMemberDerivesAnAppsSecretADriverKnowsOnlyItsOwn() {
    Identity app = Identity.app(new AppId("app-1"), AppSecrets.nonce(AppSecrets.token()));
    Identity other = Identity.app(new AppId("app-2"), AppSecrets.nonce(AppSecrets.token()));
    AuthSettings member = new AuthSettings(true, Optional.of(CLUSTER), Optional.empty());
    Secret secret = member.secretOf(app).orElseThrow();
    assertThat(secret.toBytes())
        .isEqualTo(AppSecrets.derive(CLUSTER, new AppId(app.app()), app.nonce()).toBytes());

    AuthSettings driver = AuthSettings.forApp(app, secret);
    assertThat(driver.secretOf(app)).contains(secret);
    assertThat(driver.secretOf(other)).isEmpty();
    assertThat(driver.secretOf(Identity.CLUSTER)).isEmpty();
  }

  @Test
  void aReplicaGrantHoldsForItsShuffleWorkerAndEndpointOnly() {
    io.faro.common.id.ShuffleId shuffle = new io.faro.common.id.ShuffleId(new AppId("app-1"), 3);
    byte[] grant = ReplicaGrants.grant(CLUSTER, shuffle, "w2", "10.0.0.2", 9098);
    assertThat(ReplicaGrants.valid(CLUSTER, shuffle, "w2", "10.0.0.2", 9098, grant)).isTrue();
    assertThat(ReplicaGrants.valid(CLUSTER, shuffle, "w2", "10.0.0.9", 9098, grant)).isFalse();
    assertThat(ReplicaGrants.valid(CLUSTER, shuffle, "w2", "10.0.0.2", 9099, grant)).isFalse();
    assertThat(ReplicaGrants.valid(CLUSTER, shuffle, "w3", "10.0.0.2", 9098, grant)).isFalse();
    assertThat(
            ReplicaGrants.valid(
                CLUSTER,
                new io.faro.common.id.ShuffleId(new AppId("app-1"), 4),
                "w2",
                "10.0.0.2",
                9098,
                grant))
        .isFalse();
    assertThat(
            ReplicaGrants.valid(
                Secret.of("another-cluster-0123456789abcdef"),
                shuffle,
                "w2",
                "10.0.0.2",
                9098,
                grant))
        .isFalse();
  }

  @Test
  void identitiesSurviveTheWireAndMalformedOnesAreRefused() {
    String nonce = AppSecrets.nonce(AppSecrets.token());
    Identity app = Identity.app(new AppId("spark:app-20261127_1"), nonce);
    assertThat(Identity.fromWire(app.wire())).isEqualTo(app);
    assertThat(Identity.fromWire("cluster")).isEqualTo(Identity.CLUSTER);
    assertThat(Identity.fromWire("admin")).isEqualTo(Identity.ADMIN);

    assertThatThrownBy(() -> Identity.fromWire("anonymous"))
        .hasMessageContaining("unknown identity");
    assertThatThrownBy(() -> Identity.fromWire("app:x:" + nonce.toUpperCase()))
        .hasMessageContaining("app:<app id>:<registration nonce>");
    assertThatThrownBy(() -> Identity.fromWire("app::" + nonce))
        .hasMessageContaining("app:<app id>:<registration nonce>");
    assertThatThrownBy(() -> Identity.fromWire("app:" + "a".repeat(300) + ":" + nonce))
        .hasMessageContaining("at most 256");
    assertThatThrownBy(() -> Identity.fromWire("app:bad\nid:" + nonce))
        .hasMessageContaining("bad app identity");

    assertThat(Identity.requireApp("spark:app-20261127_1", nonce, app, "X")).isEmpty();
    assertThat(Identity.requireApp("spark:app-20261127_1", "", app, "X")).isEmpty();
    assertThat(
            Identity.requireApp(
                "spark:app-20261127_1", AppSecrets.nonce(AppSecrets.token()), app, "X"))
        .hasValueSatisfying(r -> assertThat(r).contains("of another registration"));
    assertThat(Identity.requireApp("other", "", app, "X"))
        .hasValueSatisfying(r -> assertThat(r).contains("acts on app other"));
    assertThat(Identity.requireApp("other", "", Identity.CLUSTER, "X")).isPresent();
  }
}
