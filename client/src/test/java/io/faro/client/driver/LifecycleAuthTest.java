package io.faro.client.driver;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.MessageType;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The identity of the lifecycle port: the registration's with a cluster that authenticates apps,
 * else one of the driver's own that nobody else can guess; only a connection that proves it is
 * served, and the port's network settings ask for it.
 */
class LifecycleAuthTest {
  private static final AppId APP = new AppId("app-auth");

  private static NetworkSettings network() {
    return ClientSettings.from(FaroConf.of(Map.of("faro.auth.enabled", "false"))).network();
  }

  @Test
  void withoutClusterAuthTheDriverMakesAnIdentityOfItsOwnForEachApp() {
    LifecycleAuth auth = new LifecycleAuth(APP, Optional.empty());
    LifecycleAuth other = new LifecycleAuth(APP, Optional.empty());
    assertThat(auth.clusterAuthenticates()).isFalse();
    Identity identity = auth.credentials().identity();
    assertThat(identity.isApp(APP.value())).isTrue();
    assertThat(identity).isNotEqualTo(other.credentials().identity());
    assertThat(auth.credentials().secret()).isPresent();

    assertThat(auth.refusal(MessageType.MAPPER_END_REQUEST, identity)).isEmpty();
    assertThat(auth.refusal(MessageType.MAPPER_END_REQUEST, Identity.ANONYMOUS)).isPresent();
    assertThat(
            auth.refusal(
                MessageType.GET_REDUCER_FILE_GROUPS_REQUEST, other.credentials().identity()))
        .as("another registration of the same app")
        .isPresent();

    AuthSettings port = auth.portNetwork(network()).auth();
    assertThat(port.enabled()).isTrue();
    assertThat(port.apps()).containsOnlyKeys(identity);
  }

  @Test
  void withClusterAuthTheRegistrationsCredentialsAreServed() {
    AuthOptions.Credentials cluster =
        AuthOptions.Credentials.app(
            Identity.app(APP, AppSecrets.nonce(AppSecrets.token())),
            Secret.ofBytes(AppSecrets.token()));
    LifecycleAuth auth = new LifecycleAuth(APP, Optional.of(cluster));
    assertThat(auth.clusterAuthenticates()).isTrue();
    assertThat(auth.credentials()).isSameAs(cluster);
    assertThat(auth.refusal(MessageType.REVIVE_REQUEST, cluster.identity())).isEmpty();
    assertThat(auth.refusal(MessageType.REVIVE_REQUEST, Identity.ANONYMOUS)).isPresent();
    assertThat(auth.portNetwork(network()).auth().apps()).containsOnlyKeys(cluster.identity());
  }
}
