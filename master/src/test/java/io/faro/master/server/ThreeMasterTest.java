package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.RemoteException;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.Eventually;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.EmptyResponse;
import io.faro.proto.RegisterWorkerResponse;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three masters run the same code as one: followers point at the leader, and failover keeps the state. */
class ThreeMasterTest {
  @TempDir Path dir;

  @Test
  void followersRedirectToTheLeaderAndANewLeaderKeepsTheState() throws Exception {
    int[] rpcPorts = {freePort(), freePort(), freePort()};
    int[] raftPorts = {freePort(), freePort(), freePort()};
    List<String> peers = new ArrayList<>();
    List<HostPort> endpoints = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      peers.add("m" + (i + 1) + "@127.0.0.1:" + raftPorts[i] + "/" + rpcPorts[i]);
      endpoints.add(new HostPort("127.0.0.1", rpcPorts[i]));
    }
    List<MasterServer> masters = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      FaroConf conf = MasterFixture.conf(dir.resolve("m" + (i + 1)))
          .with(MasterServerOptions.ID, "m" + (i + 1))
          .with(MasterServerOptions.PORT, Integer.toString(rpcPorts[i]))
          .with(MasterServerOptions.RAFT_PEERS, String.join(",", peers))
          .with(MasterServerOptions.RAFT_PORT, Integer.toString(raftPorts[i]));
      masters.add(new MasterServer(conf));
    }
    try (ClientPool pool = new ClientPool("test-client", NetworkOptions.Settings.from(FaroConf.empty()))) {
      CompletableFuture.allOf(masters.stream()
          .map(m -> CompletableFuture.runAsync(m::start)).toArray(CompletableFuture[]::new)).join();
      Eventually.await(Duration.ofSeconds(15), "a leader", () -> masters.stream().anyMatch(MasterServer::isLeader));
      MasterServer leader = masters.stream().filter(MasterServer::isLeader).findFirst().orElseThrow();
      MasterServer follower = masters.stream().filter(m -> m != leader).findFirst().orElseThrow();

      RemoteException redirect = (RemoteException) Futures.unwrap(pool.call(
          new HostPort("127.0.0.1", follower.rpcPort()), Requests.registerApp("app-1"), EmptyResponse.class)
          .handle((ok, e) -> e).join());
      assertThat(redirect.code()).isEqualTo(ErrorCode.NOT_LEADER);
      assertThat(redirect.leaderHint()).isEqualTo("127.0.0.1:" + leader.rpcPort());

      MasterClient client = new MasterClient(pool, endpoints, Duration.ofSeconds(20));
      client.callBlocking(Requests.registerWorker("w1", 1), RegisterWorkerResponse.class);
      client.callBlocking(Requests.registerApp("app-1"), EmptyResponse.class);

      leader.close();
      Eventually.await(Duration.ofSeconds(20), "a new leader",
          () -> masters.stream().anyMatch(m -> m != leader && m.isLeader()));
      ClusterStatusResponse status = client.callBlocking(
          ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
      assertThat(status.getLeaderId()).isNotEqualTo(leader.masterId());
      assertThat(status.getAppsList()).containsExactly("app-1");
      assertThat(status.getWorkersList()).singleElement()
          .satisfies(w -> assertThat(w.getWorkerId()).isEqualTo("w1"));
    } finally {
      masters.forEach(MasterServer::close);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
