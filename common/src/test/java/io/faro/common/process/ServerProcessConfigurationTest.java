package io.faro.common.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.CommonOptionGroup;
import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.config.KnownKeys;
import io.faro.common.network.NetworkOptions;
import io.faro.common.testing.RecordingLogger;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerProcessConfigurationTest {
  private static final KnownKeys COMMON = new KnownKeys(List.of(new CommonOptionGroup()));
  private static final RecordingLogger LOG = new RecordingLogger();

  @TempDir Path dir;

  @Test
  void overridesWinOverTheFileAndUnknownKeysOnlyWarnByDefault() throws IOException {
    Path file = dir.resolve("faro.conf");
    Files.writeString(file, "faro.network.request.timeout 5s\nfaro.network.request.timout 9s\n");

    RecordingLogger log = new RecordingLogger();

    FaroConf conf =
        ServerProcess.configuration(
            file,
            Map.of("faro.network.connect.timeout", "2s", "faro.netwrok.io.threads", "2"),
            COMMON,
            log);

    assertThat(conf.get(NetworkOptions.REQUEST_TIMEOUT)).isEqualTo(Duration.ofSeconds(5));
    assertThat(conf.get(NetworkOptions.CONNECT_TIMEOUT)).isEqualTo(Duration.ofSeconds(2));
    assertThat(log.lines())
        .containsExactly(
            "WARN Ignoring unknown config key faro.network.request.timout (in "
                + file
                + "; did you mean "
                + "faro.network.request.timeout?). Every key is in docs/configuration.md; faro.config.strict=true "
                + "refuses to start on unknown keys",
            "WARN Ignoring unknown config key faro.netwrok.io.threads (set with --set; did you mean "
                + "faro.network.io.threads?). Every key is in docs/configuration.md; faro.config.strict=true refuses "
                + "to start on unknown keys");
  }

  @Test
  void strictRefusesAnUnknownKeyFromTheFileNamingTheFileAndTheClosestKey() throws IOException {
    Path file = dir.resolve("faro.conf");
    Files.writeString(file, "faro.config.strict true\nfaro.network.request.timout 9s\n");

    assertThatThrownBy(() -> ServerProcess.configuration(file, Map.of(), COMMON, LOG))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "faro.network.request.timout (in "
                + file
                + "; did you mean faro.network.request.timeout?)")
        .hasMessageContaining("faro.config.strict");
  }

  @Test
  void strictFromAFlagRefusesAnUnknownFlag() {
    assertThatThrownBy(
            () ->
                ServerProcess.configuration(
                    null,
                    Map.of("faro.config.strict", "true", "faro.network.io.thread", "4"),
                    COMMON,
                    LOG))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "faro.network.io.thread (set with --set; did you mean faro.network.io.threads?)");
  }

  @Test
  void aBadStrictValueNamesItsKey() {
    assertThatThrownBy(
            () ->
                ServerProcess.configuration(null, Map.of("faro.config.strict", "yes"), COMMON, LOG))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.config.strict")
        .hasMessageContaining("true or false");
  }
}
