package io.faro.common.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.network.ClientPool;
import io.faro.common.network.FreePorts;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.TransportServer;
import io.faro.proto.EmptyResponse;
import io.faro.proto.RegisterAppRequest;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The master client finds whichever master answers, however often the answering master moves: real
 * servers on loopback come and go on three fixed ports.
 */
class MasterClientTest {
  private static final NetworkSettings NETWORK =
      NetworkSettings.from(
          FaroConf.empty().with(NetworkOptions.IO_THREADS, "1").with("faro.auth.enabled", "false"));
  private static final RegisterAppRequest REQUEST =
      RegisterAppRequest.newBuilder().setAppId("app").build();

  @Test
  void findsTheAnsweringMasterEachTimeItMoves() throws IOException {
    int[] ports = FreePorts.loopback(3);
    List<HostPort> endpoints = new ArrayList<>();
    for (int port : ports) {
      endpoints.add(new HostPort("127.0.0.1", port));
    }
    try (ClientPool pool = new ClientPool("test-client", NETWORK)) {
      MasterClient client =
          new MasterClient(pool, endpoints, Duration.ofSeconds(20), Duration.ofSeconds(2));
      // The only master that answers moves 2 -> 0 -> 1 -> 2 -> 0: each time the client has to move
      // past the master it used last, which no longer listens (connection refused).
      for (int answering : new int[] {2, 0, 1, 2, 0}) {
        try (TransportServer server =
            new TransportServer(
                "master-" + answering,
                "127.0.0.1",
                ports[answering],
                "faro.master.port",
                NETWORK,
                (request, responder) -> responder.respond(EmptyResponse.getDefaultInstance()),
                null)) {
          assertThat(client.callBlocking(REQUEST, EmptyResponse.class))
              .as("answered by master %d", answering)
              .isEqualTo(EmptyResponse.getDefaultInstance());
        }
      }
    }
  }
}
