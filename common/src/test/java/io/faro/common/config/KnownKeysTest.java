package io.faro.common.config;

import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.stringOption;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.slf4j.helpers.NOPLogger;

class KnownKeysTest {
  /** A worker module as a test would load it: its own keys, the common ones, no client module. */
  private static final ConfigOptionGroup WORKER =
      new ConfigOptionGroup() {
        @Override
        public List<ConfigOption<?>> options() {
          return List.of(
              stringOption("faro.worker.dirs", "", "disks"),
              intOption("faro.worker.rpc.port", 9100, 0, 65535, "port", "port"),
              stringOption("faro.worker.memory.budget", "0", "budget"));
        }

        @Override
        public List<String> namespaces() {
          return List.of("faro.worker.");
        }
      };

  private final KnownKeys known = new KnownKeys(List.of(new CommonOptionGroup(), WORKER));

  @Test
  void declaredKeysAreKnown() {
    assertThat(known.accepts("faro.worker.dirs")).isTrue();
    assertThat(known.accepts("faro.network.request.timeout")).isTrue();
    assertThat(known.accepts("faro.master.endpoints")).isTrue();
    assertThat(known.accepts("faro.config.strict")).isTrue();
  }

  @Test
  void misspeltKeysOfLoadedModulesAreUnknown() {
    assertThat(known.accepts("faro.worker.dirz")).isFalse();
    assertThat(known.accepts("faro.network.request.timout")).isFalse();
    assertThat(known.accepts("faro.master.client.retry.timout")).isFalse();
    assertThat(known.accepts("faro.wroker.dirs")).as("a misspelt namespace").isFalse();
    assertThat(known.accepts("spark.faro.client.push.batch.size")).isFalse();
  }

  @Test
  void keysOfAModuleThatIsNotLoadedCannotBeJudged() {
    // The same faro-defaults.conf serves every process: the client's keys are not a worker's typo.
    assertThat(known.accepts("faro.client.push.replicate.enabled")).isTrue();
    assertThat(known.accepts("faro.master.ratis.dir")).isTrue();
    // Nor the fault injection's, which only tests load (the faro-testing module).
    assertThat(known.accepts("faro.testing.drop.connections.per.mille")).isTrue();
  }

  @Test
  void aRetiredKeyNamesWhatReplacedIt() {
    List<KnownKeys.UnknownKey> unknown =
        known.unknown(java.util.Map.of("faro.worker.disk.reserve", "in faro.conf"));
    assertThat(unknown).hasSize(1);
    assertThat(unknown.get(0).describe())
        .contains(
            "faro.worker.disk.reserve", "in faro.conf", "faro.worker.tier.<nvme|ssd|hdd>.reserve");
  }

  @Test
  void theWorkersOldFaultKeysNameTheirReplacementsInTheTestingModule() {
    List<KnownKeys.UnknownKey> unknown =
        known.unknown(
            Map.of(
                "faro.worker.testing.drop.connections.per.mille", "in faro.conf",
                "faro.worker.testing.slow.disk.delay.per.mib", "set with --set"));

    assertThat(unknown).hasSize(2);
    assertThat(unknown.get(0).describe())
        .contains("no longer read; replaced by faro.testing.drop.connections.per.mille")
        .contains("faro-testing");
    assertThat(unknown.get(1).describe())
        .contains("no longer read; replaced by faro.testing.slow.disk.delay.per.mib");
  }

  @Test
  void suggestsTheClosestKeyForATypo() {
    assertThat(known.closest("faro.worker.dirz")).contains("faro.worker.dirs");
    assertThat(known.closest("faro.worker.dir")).contains("faro.worker.dirs");
    assertThat(known.closest("faro.wroker.dirs")).contains("faro.worker.dirs");
    assertThat(known.closest("faro.worker.memory.budgte")).contains("faro.worker.memory.budget");
    assertThat(known.closest("faro.network.request.timout"))
        .contains("faro.network.request.timeout");
    assertThat(known.closest("faro.worker.rpc"))
        .as("the start of a key")
        .contains("faro.worker.rpc.port");
    assertThat(known.closest("faro.worker.dirs.list"))
        .as("a key and more")
        .contains("faro.worker.dirs");
    assertThat(known.closest("faro.worker.something.else.entirely")).isEmpty();
    assertThat(known.closest("faro.worker.memory.limit")).as("another key, not a typo").isEmpty();
    assertThat(known.closest("x".repeat(100_000))).isEmpty();
  }

  @Test
  void distanceCountsInsertionsDeletionsReplacementsAndSwaps() {
    assertThat(KnownKeys.distance("", "abc")).isEqualTo(3);
    assertThat(KnownKeys.distance("abc", "abc")).isZero();
    assertThat(KnownKeys.distance("abc", "abd")).isEqualTo(1);
    assertThat(KnownKeys.distance("abc", "ab")).isEqualTo(1);
    assertThat(KnownKeys.distance("worker", "wroker")).isEqualTo(1);
    assertThat(KnownKeys.distance("kitten", "sitting")).isEqualTo(3);
  }

  @Test
  void unknownKeysNameWhereTheyWereSetAndTheClosestKey() {
    List<KnownKeys.UnknownKey> unknown =
        known.unknown(
            Map.of(
                "faro.worker.dirs", "in faro.conf",
                "faro.worker.dirz", "in faro.conf",
                "faro.worker.rpc.prot", "set with --set",
                "faro.client.push.batch.size", "in faro.conf"));

    assertThat(unknown)
        .containsExactly(
            new KnownKeys.UnknownKey(
                "faro.worker.dirz", "in faro.conf", Optional.of("faro.worker.dirs")),
            new KnownKeys.UnknownKey(
                "faro.worker.rpc.prot", "set with --set", Optional.of("faro.worker.rpc.port")));
    assertThat(unknown.get(0).describe())
        .isEqualTo("faro.worker.dirz (in faro.conf; did you mean faro.worker.dirs?)");
  }

  @Test
  void strictRefusesNamingEveryKeyItsSuggestionAndHowToTurnItOff() {
    List<KnownKeys.UnknownKey> unknown =
        known.unknown(Map.of("faro.worker.dirz", "in faro.conf", "faro.bogus", "set with --set"));

    assertThatThrownBy(() -> KnownKeys.report(unknown, true, NOPLogger.NOP_LOGGER))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.dirz (in faro.conf; did you mean faro.worker.dirs?)")
        .hasMessageContaining("faro.bogus (set with --set; no known key is like it)")
        .hasMessageContaining("set faro.config.strict to false")
        .hasMessageContaining("true or false");
  }

  @Test
  void notStrictOnlyWarns() {
    List<KnownKeys.UnknownKey> unknown = known.unknown(Map.of("faro.worker.dirz", "in faro.conf"));
    KnownKeys.report(unknown, false, NOPLogger.NOP_LOGGER); // no exception
    KnownKeys.report(List.of(), true, NOPLogger.NOP_LOGGER);
  }

  @Test
  void anIdOfControlCharactersIsSafeInTheMessage() {
    KnownKeys.UnknownKey key =
        new KnownKeys.UnknownKey("faro.x\nINFO forged", "in f", Optional.empty());
    assertThat(key.describe()).doesNotContain("\n");
  }
}
