package io.faro.bench.masters;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.id.AppId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterAppResponse;
import java.time.Duration;

/**
 * An application the benchmarks registered as a driver does: with a registration token, then its
 * own connections proving the app's identity (a cluster without authentication answers with no
 * secret, and the connections prove nothing). Closing it closes its connections.
 */
record BenchApp(AppId id, ClientPool pool, MasterClient client) implements AutoCloseable {
  /** Registers {@code id} through {@code registrar} (an anonymous client), waiting. */
  static BenchApp register(MasterClient registrar, AppId id) {
    byte[] token = AppSecrets.token();
    Message answer =
        registrar.callBlocking(
            RegisterAppRequest.newBuilder()
                .setAppId(id.value())
                .setRegistrationToken(ByteString.copyFrom(token))
                .build(),
            Message.class);
    AuthOptions.Credentials credentials =
        answer instanceof RegisterAppResponse r
            ? AuthOptions.Credentials.app(
                Identity.app(id, r.getAppNonce()), Secret.ofBytes(r.getAppSecret().toByteArray()))
            : AuthOptions.Credentials.NONE;
    ClientPool pool = new ClientPool("bench-" + id.value(), FleetLoad.oneThread(), credentials);
    return new BenchApp(
        id, pool, new MasterClient(pool, registrar.endpoints(), Duration.ofSeconds(60)));
  }

  @Override
  public void close() {
    pool.close();
  }
}
