package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.ConfigOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** docs/configuration.md is generated from the option classes; this test fails when they drift. */
class ConfigurationDocsTest {
  private static final Path DOC = Path.of("..", "docs", "configuration.md");

  @Test
  void configurationDocMatchesTheCode() throws Exception {
    assertThat(DOC).as("run: bin/faro docs > docs/configuration.md").exists();
    assertThat(Files.readString(DOC))
        .as(
            "docs/configuration.md is stale; regenerate with: bin/faro docs > docs/configuration.md")
        .isEqualTo(DocsCommand.configurationMarkdown());
  }

  @Test
  void everyKeyIsDocumentedOnceWithAValidDefault() {
    Set<String> keys = new HashSet<>();
    for (List<ConfigOption<?>> group : DocsCommand.allOptions().values()) {
      for (ConfigOption<?> o : group) {
        assertThat(keys.add(o.key())).as("duplicate key " + o.key()).isTrue();
        assertThat(o.key()).startsWith("faro.");
        assertThat(o.doc()).as("doc of " + o.key()).isNotBlank();
        o.parse(o.defaultText()); // throws if a default fails its own validator
      }
    }
    assertThat(keys)
        .contains("faro.master.endpoints", "faro.worker.dirs", "faro.client.push.batch.size");
  }

  @Test
  void defaultsFileOnlyNamesKnownKeysWithValidValues() throws Exception {
    Path defaults = Path.of("..", "conf", "faro-defaults.conf");
    java.util.Properties p = new java.util.Properties();
    try (var reader = Files.newBufferedReader(defaults)) {
      p.load(reader);
    }
    java.util.Map<String, ConfigOption<?>> byKey = new java.util.HashMap<>();
    DocsCommand.allOptions().values().forEach(g -> g.forEach(o -> byKey.put(o.key(), o)));
    for (String key : p.stringPropertyNames()) {
      assertThat(byKey).as("unknown key " + key + " in conf/faro-defaults.conf").containsKey(key);
      byKey.get(key).parse(p.getProperty(key));
    }
  }
}
