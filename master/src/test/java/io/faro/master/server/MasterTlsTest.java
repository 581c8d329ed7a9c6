package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.FreePorts;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.testing.Eventually;
import io.faro.common.testing.TestCertificates;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.EmptyResponse;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Masters with faro.tls.enabled: their RPC ports take TLS only, and their Raft port speaks mutual
 * TLS, so a master whose certificate no trusted authority signed cannot take part in the group: two
 * masters with trusted certificates elect a leader and replicate, the third never gets an entry.
 */
class MasterTlsTest {
  @TempDir Path dir;
  private final List<MasterServer> masters = new ArrayList<>();
  private final List<ClientPool> pools = new ArrayList<>();

  @AfterEach
  void stop() {
    masters.forEach(MasterServer::close);
    pools.forEach(ClientPool::close);
  }

  @Test
  void aMasterWithoutATrustedCertificateCannotJoinTheGroup() throws IOException {
    TestCertificates.Authority authority =
        TestCertificates.authority(dir.resolve("certs"), "cluster-ca");
    TestCertificates.Authority stranger =
        TestCertificates.authority(dir.resolve("stranger"), "stranger-ca");
    TestCertificates.Issued client = authority.issue("client");
    List<Map<String, String>> tls =
        List.of(
            authority.issue("m1").conf(),
            authority.issue("m2").conf(),
            // Trusts the cluster's authority, but its own certificate is the stranger's.
            Map.of(
                "faro.tls.enabled", "true",
                "faro.tls.cert.chain.file", stranger.issue("m3").chain().toString(),
                "faro.tls.key.file", stranger.dir().resolve("m3-key.pem").toString(),
                "faro.tls.trust.file", authority.pem().toString()));

    int[] ports = FreePorts.loopback(6);
    List<String> peers = new ArrayList<>();
    List<HostPort> endpoints = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      peers.add("m" + (i + 1) + "@127.0.0.1:" + ports[3 + i] + "/" + ports[i]);
      endpoints.add(new HostPort("127.0.0.1", ports[i]));
    }
    CompletableFuture.allOf(
            Stream.of(0, 1, 2)
                .map(
                    i -> {
                      FaroConf conf =
                          MasterFixture.conf(dir.resolve("m" + (i + 1)))
                              .withAll(FaroConf.of(tls.get(i)))
                              .with(MasterServerOptions.ID, "m" + (i + 1))
                              .with(MasterServerOptions.PORT, Integer.toString(ports[i]))
                              .with(MasterServerOptions.RAFT_PEERS, String.join(",", peers))
                              .with(MasterServerOptions.RAFT_PORT, Integer.toString(ports[3 + i]))
                              // m3 never sees a leader: its start need not wait long for one.
                              .with(MasterServerOptions.LEADER_WAIT_TIMEOUT, "5s");
                      MasterServer master = new MasterServer(conf);
                      synchronized (masters) {
                        masters.add(master);
                      }
                      return CompletableFuture.runAsync(master::start);
                    })
                .toArray(CompletableFuture[]::new))
        .join();
    MasterServer m1 = byId("m1");
    MasterServer m2 = byId("m2");
    MasterServer m3 = byId("m3");
    Eventually.await(
        "m1 or m2 leads", Duration.ofSeconds(30), () -> m1.isLeader() || m2.isLeader());

    ClientPool pool = new ClientPool("tls-client", network(client.conf()));
    pools.add(pool);
    MasterClient masterClient = new MasterClient(pool, endpoints, Duration.ofSeconds(30));
    for (int i = 0; i < 10; i++) {
      masterClient.callBlocking(Requests.registerApp("app-" + i), EmptyResponse.class);
    }
    MasterServer follower = m1.isLeader() ? m2 : m1;
    Eventually.await(
        "the other trusted master applied every app",
        Duration.ofSeconds(30),
        () -> follower.stateView().apps().size() == 10);

    assertThat(m3.isLeader()).isFalse();
    assertThat(m3.stateView().apps()).as("the stranger got no entry").isEmpty();

    // A client without TLS is told what the port wants.
    ClientPool plain = new ClientPool("plain-client", network(Map.of()));
    pools.add(plain);
    assertThatThrownBy(
            () ->
                Futures.await(
                    plain.call(
                        endpoints.get(0),
                        MasterStatusRequest.getDefaultInstance(),
                        MasterStatusResponse.class),
                    Duration.ofSeconds(10),
                    "status"))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        .hasMessageContaining("takes TLS connections only");
  }

  private MasterServer byId(String id) {
    return masters.stream().filter(m -> m.masterId().equals(id)).findFirst().orElseThrow();
  }

  private static NetworkSettings network(Map<String, String> conf) {
    return NetworkSettings.from(FaroConf.of(conf));
  }
}
