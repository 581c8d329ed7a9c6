package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.config.KnownKeys;
import io.faro.common.process.ServerProcess;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/faro sees every module but faro-testing (which only tests load): a key is unknown only when
 * no module declares it.
 */
class UnknownConfigKeysTest {
  /** The faro-testing module's keys: fault injection, on tests' class paths only. */
  private static final String TESTING_NAMESPACE = "faro.testing.";

  @TempDir Path dir;

  @Test
  void everyModuleContributesItsKeysAndClaimsItsNamespace() {
    KnownKeys known = KnownKeys.loaded();
    Set<String> documented =
        DocsCommand.allOptions().values().stream()
            .flatMap(java.util.List::stream)
            .map(ConfigOption::key)
            .collect(Collectors.toSet());

    assertThat(known.keys()).containsExactlyInAnyOrderElementsOf(documented);
    for (String namespace : KnownKeys.MODULE_NAMESPACES) {
      if (namespace.equals(TESTING_NAMESPACE)) {
        continue; // below
      }
      assertThat(known.accepts(namespace + "no.such.key"))
          .as("a module claims " + namespace)
          .isFalse();
    }
  }

  @Test
  void theFaultInjectionOfTestsIsNotLoadedAndItsKeysAreLetThrough() {
    KnownKeys known = KnownKeys.loaded();

    assertThat(KnownKeys.MODULE_NAMESPACES).contains(TESTING_NAMESPACE);
    assertThat(known.keys()).noneMatch(k -> k.startsWith(TESTING_NAMESPACE));
    assertThat(known.accepts(TESTING_NAMESPACE + "drop.connections.per.mille"))
        .as("a key of a module bin/faro never loads cannot be judged")
        .isTrue();
  }

  @Test
  void oneSharedFileWithEveryModulesKeysPassesStrict() throws IOException {
    Path shared = dir.resolve("faro-defaults.conf");
    Files.writeString(
        shared,
        """
        faro.config.strict true
        faro.master.endpoints m1:9097
        faro.master.ratis.dir /data/faro/ratis
        faro.worker.dirs /data1/faro:ssd
        faro.client.push.replicate.enabled true
        faro.network.request.timeout 60s
        """);

    FaroConf conf = ServerProcess.configuration(shared, Map.of("faro.worker.rpc.port", "0"));

    assertThat(conf.get(KnownKeys.STRICT)).isTrue();
  }

  @Test
  void aWorkerUnderStrictRefusesATypoNamingItAndTheKeyMeant() throws IOException {
    Path shared = dir.resolve("faro-defaults.conf");
    Files.writeString(
        shared,
        """
        faro.config.strict true
        faro.worker.dirz /data1/faro:ssd
        faro.client.push.replicate.enabled true
        """);
    StringWriter err = new StringWriter();

    int exit =
        FaroCli.run(
            new PrintWriter(new StringWriter()),
            new PrintWriter(err, true),
            "worker",
            "--conf",
            shared.toString(),
            "--set",
            "faro.wroker.rpc.port=0");

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString())
        .startsWith("faro worker: Unknown config keys ")
        .contains("faro.worker.dirz (in " + shared + "; did you mean faro.worker.dirs?)")
        .contains("faro.wroker.rpc.port (set with --set; did you mean faro.worker.rpc.port?)")
        .contains("faro.config.strict")
        .doesNotContain("faro.client.push.replicate.enabled");
  }
}
