package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;

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
import io.faro.common.version.FeatureLevel;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.SetFeatureLevelRequest;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster feature level in a real group of three masters: a new group starts at the highest
 * level, a group at level 1 is raised only when every master supports the level (and answers),
 * never lowered, and with faro.master.feature.level.auto the leader raises it by itself.
 */
class FeatureLevelGroupTest {
  @TempDir Path dir;
  private final int[] rpcPorts = new int[3];
  private final int[] raftPorts = new int[3];
  private final List<String> peers = new ArrayList<>();
  private final List<HostPort> endpoints = new ArrayList<>();
  private final MasterServer[] masters = new MasterServer[3];
  private ClientPool pool;
  private MasterClient client;

  private void startGroup(FaroConf extra) throws IOException {
    int[] ports = FreePorts.loopback(6);
    for (int i = 0; i < 3; i++) {
      rpcPorts[i] = ports[i];
      raftPorts[i] = ports[3 + i];
      peers.add("m" + (i + 1) + "@127.0.0.1:" + raftPorts[i] + "/" + rpcPorts[i]);
      endpoints.add(new HostPort("127.0.0.1", rpcPorts[i]));
    }
    pool = new ClientPool("test-client", NetworkSettings.from(FaroConf.empty()));
    client = new MasterClient(pool, endpoints, Duration.ofSeconds(30));
    CompletableFuture.allOf(
            IntStream.range(0, 3)
                .mapToObj(i -> CompletableFuture.runAsync(() -> start(i, extra)))
                .toArray(CompletableFuture[]::new))
        .join();
  }

  private void start(int i, FaroConf extra) {
    FaroConf conf =
        MasterFixture.conf(dir.resolve("m" + (i + 1)))
            .withAll(extra)
            .with(MasterServerOptions.ID, "m" + (i + 1))
            .with(MasterServerOptions.PORT, Integer.toString(rpcPorts[i]))
            .with(MasterServerOptions.RAFT_PEERS, String.join(",", peers))
            .with(MasterServerOptions.RAFT_PORT, Integer.toString(raftPorts[i]));
    MasterServer master = new MasterServer(conf);
    masters[i] = master;
    master.start();
  }

  @AfterEach
  void stopGroup() {
    for (MasterServer m : masters) {
      if (m != null) {
        m.close();
      }
    }
    if (pool != null) {
      pool.close();
    }
  }

  private MasterStatusResponse status(int i) {
    return Futures.await(
        pool.call(
            endpoints.get(i), MasterStatusRequest.getDefaultInstance(), MasterStatusResponse.class),
        Duration.ofSeconds(10),
        "status of m" + (i + 1));
  }

  private void awaitLevel(int level) {
    Eventually.await(
        "every master at feature level " + level,
        Duration.ofSeconds(30),
        () -> IntStream.range(0, 3).allMatch(i -> status(i).getFeatureLevel() == level));
  }

  private FaroException refused(int level) {
    Throwable e =
        Futures.unwrap(
            CompletableFuture.supplyAsync(
                    () ->
                        client.callBlocking(
                            SetFeatureLevelRequest.newBuilder().setLevel(level).build(),
                            MasterStatusResponse.class))
                .handle((ok, error) -> error)
                .join());
    assertThat(e).isInstanceOf(FaroException.class);
    return (FaroException) e;
  }

  @Test
  void aNewGroupStartsAtTheHighestLevelAndKeepsItAcrossARestart() throws IOException {
    startGroup(FaroConf.empty());
    awaitLevel(FeatureLevel.MAX);
    MasterStatusResponse s = status(0);
    assertThat(s.getMinFeatureLevel()).isEqualTo(FeatureLevel.MIN);
    assertThat(s.getMaxFeatureLevel()).isEqualTo(FeatureLevel.MAX);
    assertThat(s.getProtocolVersion()).isEqualTo(2);
    assertThat(s.getRelease()).isNotEmpty();

    masters[1].close();
    start(1, FaroConf.empty());
    Eventually.await(
        "m2 replayed its log", Duration.ofSeconds(30), () -> status(1).getFeatureLevel() == 2);
  }

  @Test
  void aGroupAtLevelOneIsRaisedOnlyWhenEveryMasterSupportsItAndNeverLowered() throws IOException {
    startGroup(FaroConf.empty().with(MasterServerOptions.FEATURE_LEVEL_INITIAL, "1"));
    awaitLevel(1);

    FaroException beyond = refused(FeatureLevel.MAX + 1);
    assertThat(beyond.code()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
    assertThat(beyond.getMessage())
        .contains("feature level " + (FeatureLevel.MAX + 1) + " is unknown to the leader's release")
        .contains("supports levels 1 to " + FeatureLevel.MAX);

    // A master that does not answer may be of any release: nothing is raised without it.
    int down = IntStream.range(0, 3).filter(i -> !masters[i].isLeader()).findFirst().orElseThrow();
    masters[down].close();
    FaroException missing = refused(2);
    assertThat(missing.code()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
    assertThat(missing.getMessage())
        .contains("needs every master of the group to support it")
        .contains("master m" + (down + 1) + " did not answer");
    start(down, FaroConf.empty().with(MasterServerOptions.FEATURE_LEVEL_INITIAL, "1"));

    MasterStatusResponse raised =
        client.callBlocking(
            SetFeatureLevelRequest.newBuilder().setLevel(2).build(), MasterStatusResponse.class);
    assertThat(raised.getFeatureLevel()).isEqualTo(2);
    awaitLevel(2);

    FaroException lower = refused(1);
    assertThat(lower.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(lower.getMessage()).contains("never lowered");
  }

  @Test
  void withAutoTheLeaderRaisesTheLevelOnceEveryMasterSupportsIt() throws IOException {
    startGroup(
        FaroConf.empty()
            .with(MasterServerOptions.FEATURE_LEVEL_INITIAL, "1")
            .with(MasterServerOptions.FEATURE_LEVEL_AUTO, "true"));
    awaitLevel(2);
  }
}
