package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.appender.RollingFileAppender;
import org.apache.logging.log4j.core.appender.rolling.CompositeTriggeringPolicy;
import org.apache.logging.log4j.core.appender.rolling.DefaultRolloverStrategy;
import org.apache.logging.log4j.core.appender.rolling.SizeBasedTriggeringPolicy;
import org.apache.logging.log4j.core.appender.rolling.TriggeringPolicy;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.ConfigurationFactory;
import org.apache.logging.log4j.core.config.ConfigurationSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * conf/log4j2.xml, loaded by log4j2's own ConfigurationFactory in a context of its own: stdout by
 * default; with faro.log.dir set, a rolling file by size with a bounded number kept, and nothing on
 * stdout, so that no line is written twice.
 */
class LoggingConfigTest {
  private static final Path CONFIG = Path.of("..", "conf", "log4j2.xml");

  @TempDir Path logDir;

  @Test
  void withoutALogDirectoryEverythingGoesToStdout() throws IOException {
    withProperties(
        null,
        null,
        context -> {
          Configuration config = context.getConfiguration();
          assertThat(config.getAppenders()).containsOnlyKeys("console");
          assertThat(config.getAppenders().get("console")).isInstanceOf(ConsoleAppender.class);
          assertThat(config.getRootLogger().getAppenders()).containsOnlyKeys("console");
        });
  }

  @Test
  void withALogDirectoryLinesGoToOneRollingFileBySizeWithRetention() throws IOException {
    withProperties(
        logDir.toString(),
        "worker",
        context -> {
          Configuration config = context.getConfiguration();
          assertThat(config.getRootLogger().getAppenders())
              .as("one destination per line")
              .containsOnlyKeys("file");
          Appender appender = config.getAppenders().get("file");
          assertThat(appender).isInstanceOf(RollingFileAppender.class);
          RollingFileAppender file = (RollingFileAppender) appender;
          assertThat(Path.of(file.getFileName())).isEqualTo(logDir.resolve("faro-worker.log"));
          assertThat(file.getFilePattern()).isEqualTo(logDir.resolve("faro-worker.log") + ".%i.gz");
          TriggeringPolicy trigger = file.getTriggeringPolicy();
          assertThat(trigger).isInstanceOf(CompositeTriggeringPolicy.class);
          assertThat(((CompositeTriggeringPolicy) trigger).getTriggeringPolicies())
              .singleElement()
              .isInstanceOfSatisfying(
                  SizeBasedTriggeringPolicy.class,
                  size -> assertThat(size.getMaxFileSize()).isEqualTo(256L << 20));
          DefaultRolloverStrategy rollover =
              (DefaultRolloverStrategy) file.getManager().getRolloverStrategy();
          assertThat(rollover.getMaxIndex()).as("files kept").isEqualTo(10);
          assertThat(rollover.getMinIndex()).isEqualTo(1);

          context.getLogger("io.faro.test").warn("a line with a forged\nsecond line");
          context.getLogger("io.faro.test").info("an info line of Faro");
        });
    String written = Files.readString(logDir.resolve("faro-worker.log"), StandardCharsets.UTF_8);
    assertThat(written.lines()).hasSize(2);
    assertThat(written)
        .contains("WARN  [")
        .contains("test - a line with a forged\\nsecond line")
        .contains("INFO  [")
        .contains("an info line of Faro");
  }

  /**
   * Loads the config with the given system properties (null: unset), runs {@code check}, restores.
   */
  private static void withProperties(
      String dir, String name, java.util.function.Consumer<LoggerContext> check)
      throws IOException {
    Map<String, String> saved = new java.util.HashMap<>();
    for (String key : new String[] {"faro.log.dir", "faro.log.name"}) {
      saved.put(key, System.getProperty(key));
    }
    set("faro.log.dir", dir);
    set("faro.log.name", name);
    LoggerContext context = new LoggerContext("faro-logging-config-test");
    try (InputStream in = Files.newInputStream(CONFIG)) {
      ConfigurationSource source = new ConfigurationSource(in, CONFIG.toFile());
      Configuration config = ConfigurationFactory.getInstance().getConfiguration(context, source);
      context.start(config);
      check.accept(context);
    } finally {
      context.stop();
      saved.forEach(LoggingConfigTest::set);
    }
  }

  private static void set(String key, String value) {
    if (value == null) {
      System.clearProperty(key);
    } else {
      System.setProperty(key, value);
    }
  }
}
