package io.faro.common.config;

import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.sizeOption;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.id.DiskTier;
import io.faro.common.master.MasterOptions;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigOptionTest {
  @Test
  void parsesSizesAndDurations() {
    assertThat(ConfigOption.parseSize("512")).isEqualTo(512);
    assertThat(ConfigOption.parseSize("64k")).isEqualTo(64 * 1024);
    assertThat(ConfigOption.parseSize("8m")).isEqualTo(8L << 20);
    assertThat(ConfigOption.parseSize("2g")).isEqualTo(2L << 30);
    assertThat(ConfigOption.parseSize("1GiB")).isEqualTo(1L << 30);
    assertThat(ConfigOption.parseSize("3mb")).isEqualTo(3L << 20);
    assertThat(ConfigOption.parseDuration("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(ConfigOption.parseDuration("30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(ConfigOption.parseDuration("5m")).isEqualTo(Duration.ofMinutes(5));
    assertThat(ConfigOption.parseDuration("1500")).isEqualTo(Duration.ofMillis(1500));
  }

  @Test
  void defaultsApplyAndSetValuesWin() {
    FaroConf conf = FaroConf.empty().with("faro.network.request.timeout", "5s");
    assertThat(conf.get(NetworkOptions.REQUEST_TIMEOUT)).isEqualTo(Duration.ofSeconds(5));
    assertThat(conf.get(NetworkOptions.MAX_FRAME_SIZE)).isEqualTo(128L << 20);
    assertThat(conf.get(MasterOptions.ENDPOINTS)).containsExactly(new HostPort("localhost", 9097));
  }

  @Test
  void badValuesNameTheKeyAndWhatIsAllowed() {
    ConfigOption<Integer> threads = intOption("faro.test.threads", 4, 1, 64, "threads", "doc");
    FaroConf conf = FaroConf.of(Map.of("faro.test.threads", "0"));
    assertThatThrownBy(() -> conf.get(threads))
        .isInstanceOf(ConfigException.class)
        .hasMessage("Invalid value '0' for faro.test.threads: expected an integer in [1, 64]");
    assertThatThrownBy(() -> FaroConf.of(Map.of("faro.test.threads", "many")).get(threads))
        .hasMessageStartingWith(
            "Invalid value 'many' for faro.test.threads: expected an integer in [1, 64]");
    ConfigOption<Long> size = sizeOption("faro.test.size", "1m", 1024, 1L << 30, "doc");
    assertThatThrownBy(() -> FaroConf.of(Map.of("faro.test.size", "12q")).get(size))
        .hasMessageContaining("faro.test.size")
        .hasMessageContaining("a size like 512k");
    ConfigOption<Duration> timeout =
        durationOption("faro.test.timeout", "1s", Duration.ofMillis(100), "doc");
    assertThatThrownBy(() -> FaroConf.of(Map.of("faro.test.timeout", "10ms")).get(timeout))
        .hasMessageContaining("at least 100ms");
    assertThatThrownBy(
            () ->
                FaroConf.of(Map.of("faro.master.endpoints", "nohost")).get(MasterOptions.ENDPOINTS))
        .hasMessageContaining("faro.master.endpoints")
        .hasMessageContaining("host:port");
    assertThatThrownBy(() -> DiskTier.parse("tape")).hasMessageContaining("nvme, ssd, hdd");
  }

  @Test
  void aDefaultThatFailsItsOwnValidatorIsADefect() {
    assertThatThrownBy(() -> intOption("faro.test.bad", 0, 1, 2, "", "doc"))
        .hasMessageContaining("faro.test.bad");
  }

  @Test
  void loadsSparkStyleAndEqualsStyleFiles(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("faro.conf");
    Files.writeString(
        file, "# comment\nfaro.network.request.timeout 7s\nfaro.master.endpoints=a:1, b:2\n");
    FaroConf conf = FaroConf.load(file);
    assertThat(conf.get(NetworkOptions.REQUEST_TIMEOUT)).isEqualTo(Duration.ofSeconds(7));
    assertThat(conf.get(MasterOptions.ENDPOINTS))
        .isEqualTo(List.of(new HostPort("a", 1), new HostPort("b", 2)));
    assertThatThrownBy(() -> FaroConf.load(dir.resolve("missing.conf")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("missing.conf");
  }

  @Test
  void docsListEveryOptionWithDefaultAndAllowedValues() {
    String md = ConfigDocs.render(Map.of("Network", List.copyOf(NetworkOptions.ALL)));
    for (ConfigOption<?> o : NetworkOptions.ALL) {
      assertThat(md).contains("`" + o.key() + "`").contains(o.allowed());
    }
  }
}
