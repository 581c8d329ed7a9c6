package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.network.ClientPool;
import io.faro.common.network.FreePorts;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.RemoteException;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.EmptyResponse;
import io.faro.proto.WorkerHeartbeatResponse;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A master that is not the leader says so instead of answering from its own state. */
class NotLeaderTest {
  @TempDir Path dir;

  @Test
  void masterWithoutQuorumAnswersNotLeader() throws IOException {
    int[] ports = FreePorts.loopback(2);
    int raftPort = ports[0];
    int absentPeerPort = ports[1];
    // Two masters configured, only one started: no quorum, so no leader.
    FaroConf conf =
        MasterFixture.conf(dir)
            .with(
                MasterServerOptions.RAFT_PEERS,
                "m1@127.0.0.1:" + raftPort + ",m2@127.0.0.1:" + absentPeerPort)
            .with(MasterServerOptions.RAFT_PORT, Integer.toString(raftPort))
            .with(MasterServerOptions.LEADER_WAIT_TIMEOUT, "200ms");
    try (MasterServer server = new MasterServer(conf);
        ClientPool pool = new ClientPool("test-client", NetworkSettings.from(FaroConf.empty()))) {
      server.start();
      assertThat(server.isLeader()).isFalse();

      HostPort endpoint = new HostPort("127.0.0.1", server.rpcPort());
      Throwable error =
          Futures.unwrap(
              pool.call(endpoint, Requests.registerApp("app-1"), EmptyResponse.class)
                  .handle((ok, e) -> e)
                  .join());

      assertThat(error)
          .isInstanceOfSatisfying(
              RemoteException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.NOT_LEADER);
                assertThat(e.retryable()).isTrue();
                assertThat(e).hasMessageContaining("m1");
              });
      // Every master keeps the heartbeats it hears, but only the leader gives instructions: a
      // master without a quorum never tells a worker to delete files or to register again.
      WorkerHeartbeatResponse beat =
          pool.call(
                  endpoint,
                  Requests.heartbeat("w1", List.of(Requests.shuffle("app-1", 3))),
                  WorkerHeartbeatResponse.class)
              .join();
      assertThat(beat.getLeader()).isFalse();
      assertThat(beat.getExpiredShufflesList()).isEmpty();
      assertThat(beat.getRegisterAgain()).isFalse();
      assertThat(pool.call(endpoint, Requests.appHeartbeat("app-1"), EmptyResponse.class).join())
          .isEqualTo(EmptyResponse.getDefaultInstance());
    }
  }
}
