package io.faro.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.ConfigDocs;
import io.faro.common.config.ConfigException;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.network.HostPort;
import io.faro.master.raft.RaftPeerSpec;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MasterServerSettingsTest {
  /** Settings without secrets: these tests read other keys. */
  private static final FaroConf OPEN = FaroConf.empty().with("faro.auth.enabled", "false");

  @Test
  void asShippedAMasterNeedsTheClusterSecretAndSaysHowToMakeOne(
      @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> MasterServerSettings.from(FaroConf.empty()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.auth.cluster.secret.file must name a file")
        .hasMessageContaining("bin/faro secret --out")
        .hasMessageContaining("faro.auth.enabled=false");

    Path secret = dir.resolve("cluster.secret");
    io.faro.common.auth.Secret.writeNew(secret);
    MasterServerSettings config =
        MasterServerSettings.from(
            FaroConf.empty().with("faro.auth.cluster.secret.file", secret.toString()));
    assertThat(config.network().auth().enabled()).isTrue();
    assertThat(config.network().auth().offWarning("master")).isEmpty();
    assertThat(MasterServerSettings.from(OPEN).network().auth().offWarning("master"))
        .hasValueSatisfying(w -> assertThat(w).contains("faro.auth.enabled is false"));
  }

  @Test
  void defaultsDescribeASingleMaster() {
    MasterServerSettings config =
        MasterServerSettings.from(OPEN.with(MasterServerOptions.ADVERTISED_HOST, "master-1"));

    assertThat(config.bindHost()).isEqualTo("0.0.0.0");
    assertThat(config.rpcPort()).isEqualTo(9097);
    assertThat(config.raftPort()).isEqualTo(9872);
    assertThat(config.masterId()).isEqualTo("m1");
    assertThat(config.peers())
        .containsExactly(new RaftPeerSpec("m1", new HostPort("master-1", 9872), 0));
    assertThat(config.ratisDir()).isEqualTo(Path.of("/tmp/faro/master-ratis"));
    assertThat(config.workerTimeout()).isEqualTo(Duration.ofSeconds(120));
    assertThat(config.appTimeout()).isEqualTo(Duration.ofSeconds(300));
    assertThat(config.maxWorkersPerShuffle()).isEqualTo(500);
  }

  @Test
  void emptyAdvertisedHostMeansThisMachinesName() {
    assertThat(MasterServerSettings.from(OPEN).advertisedHost()).isNotBlank();
  }

  @Test
  void peersListGivesTheGroupAndThisMastersRaftPort() {
    MasterServerSettings config =
        MasterServerSettings.from(
            OPEN.with(MasterServerOptions.ID, "m2")
                .with(MasterServerOptions.RAFT_PEERS, "m1@h1:9872, m2@h2:9873/9098 ,m3@h3:9872"));

    assertThat(config.peers()).extracting(RaftPeerSpec::id).containsExactly("m1", "m2", "m3");
    assertThat(config.raftPort()).isEqualTo(9873);
    assertThat(config.self().rpcAddress(9097)).contains(new HostPort("h2", 9098));
    assertThat(config.peers().get(0).rpcAddress(9097)).contains(new HostPort("h1", 9097));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      value = {
        "faro.master.port; 70000; an integer in [0, 65535]",
        "faro.master.raft.port; -1; an integer in [0, 65535]",
        "faro.master.worker.timeout; soon; a duration",
        "faro.master.app.timeout; 10ms; at least 100ms",
        "faro.master.slots.max.workers.per.shuffle; 0; an integer in [1",
        "faro.master.snapshot.auto.trigger.threshold; many; an integer",
        "faro.master.raft.log.segment.size; 1k; a size",
        "faro.master.raft.peers; m1-localhost-9872; id@host:raftPort",
      })
  void badValueNamesTheKeyAndWhatIsAllowed(String key, String value, String allowed) {
    FaroConf conf = FaroConf.of(Map.of(key, value));

    assertThatThrownBy(() -> MasterServerSettings.from(conf))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(key)
        .hasMessageContaining(allowed);
  }

  @Test
  void withoutAnIdEachMasterFindsItselfAmongThePeersBySharedConfig() {
    // One faro-defaults.conf for every master: the entry on this machine is this master.
    String peers = "m1@10.255.255.1:9872,m2@127.0.0.1:9872/9098,m3@10.255.255.3:9872";
    assertThat(
            MasterServerSettings.from(OPEN.with(MasterServerOptions.RAFT_PEERS, peers)).masterId())
        .isEqualTo("m2");
    // Several on this machine (a local test group): the Raft port tells them apart.
    String local = "m1@127.0.0.1:9872,m2@127.0.0.1:9873,m3@127.0.0.1:9874";
    assertThat(
            MasterServerSettings.from(
                    OPEN.with(MasterServerOptions.RAFT_PEERS, local)
                        .with(MasterServerOptions.RAFT_PORT, "9874"))
                .masterId())
        .isEqualTo("m3");
    assertThatThrownBy(
            () -> MasterServerSettings.from(OPEN.with(MasterServerOptions.RAFT_PEERS, local)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("several entries")
        .hasMessageContaining("faro.master.id")
        .hasMessageContaining("faro.master.raft.port");
    assertThatThrownBy(
            () ->
                MasterServerSettings.from(
                    OPEN.with(
                        MasterServerOptions.RAFT_PEERS,
                        "m1@10.255.255.1:9872,m2@10.255.255.2:9872")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("no entry")
        .hasMessageContaining("faro.master.id");
  }

  @Test
  void peersThatDoNotListThisMasterAreRefused() {
    FaroConf conf =
        OPEN.with(MasterServerOptions.ID, "m1")
            .with(MasterServerOptions.RAFT_PEERS, "m2@h2:9872,m3@h3:9872");

    assertThatThrownBy(() -> MasterServerSettings.from(conf))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.master.raft.peers")
        .hasMessageContaining("faro.master.id=m1");
  }

  @Test
  void duplicatePeersAndConflictingPortsAreRefused() {
    assertThatThrownBy(
            () ->
                MasterServerSettings.from(
                    OPEN.with(MasterServerOptions.ID, "m1")
                        .with(MasterServerOptions.RAFT_PEERS, "m1@h1:9872,m1@h2:9872")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("listed twice");
    assertThatThrownBy(
            () ->
                MasterServerSettings.from(
                    OPEN.with(MasterServerOptions.ID, "m1")
                        .with(MasterServerOptions.RAFT_PEERS, "m1@h1:9872")
                        .with(MasterServerOptions.RAFT_PORT, "9999")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.master.raft.port=9999");
  }

  @Test
  void everyOptionIsListedInAllAndDocumented() throws IllegalAccessException {
    List<ConfigOption<?>> declared = new ArrayList<>();
    for (Field field : MasterServerOptions.class.getFields()) {
      if (Modifier.isStatic(field.getModifiers()) && field.getType() == ConfigOption.class) {
        declared.add((ConfigOption<?>) field.get(null));
      }
    }
    assertThat(MasterServerOptions.ALL).containsExactlyInAnyOrderElementsOf(declared);

    String docs = ConfigDocs.render(Map.of("Master", MasterServerOptions.ALL));
    for (ConfigOption<?> option : MasterServerOptions.ALL) {
      assertThat(option.key()).startsWith("faro.master.");
      assertThat(option.doc()).isNotBlank();
      assertThat(docs).contains("`" + option.key() + "`");
      option.parse(option.defaultText());
    }
  }
}
