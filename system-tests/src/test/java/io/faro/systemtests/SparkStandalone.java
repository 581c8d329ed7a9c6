package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.DemoJob;
import io.faro.common.testing.Eventually;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Spark standalone cluster of real processes: one Spark master and one Spark worker per loopback
 * address (127.0.0.2, 127.0.0.3, ...), so that its executors sit on different hosts as far as
 * Spark's scheduler knows. Spark starts a speculative copy of a task only on a host where no
 * attempt of it runs, and in local mode it never speculates at all: this is the smallest setup in
 * which speculation really happens.
 *
 * <p>Spark's workers launch executors with Spark's own launcher, which wants a Spark home with a
 * {@code jars} directory: an empty one is made here, and the job gives its executors their class
 * path ({@link #executorConf}).
 */
final class SparkStandalone implements AutoCloseable {
  private static final Pattern MASTER_URL =
      Pattern.compile("Starting Spark master at (spark://\\S+)");
  private static final String REGISTERED = "Registering worker ";

  private final List<Process> processes = new ArrayList<>();
  private final Path masterLog;
  private String masterUrl;

  private SparkStandalone(Path dir) {
    this.masterLog = dir.resolve("spark-master.log");
  }

  /**
   * Starts a master and {@code workers} workers of {@code cores} cores each; waits until all
   * registered.
   */
  static SparkStandalone start(Path dir, int workers, int cores) throws Exception {
    Path home = Files.createDirectories(dir.resolve("spark-home"));
    Files.createDirectories(home.resolve("jars"));
    // The class path's log4j2 settings say WARN; the master's URL and registrations are INFO.
    Files.writeString(
        home.resolve("log4j2.properties"),
        String.join(
            "\n",
            "rootLogger.level = warn",
            "rootLogger.appenderRef.stderr.ref = console",
            "appender.console.type = Console",
            "appender.console.name = console",
            "appender.console.target = SYSTEM_ERR",
            "appender.console.layout.type = PatternLayout",
            "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n",
            "logger.deploy.name = org.apache.spark.deploy",
            "logger.deploy.level = info",
            ""));
    SparkStandalone cluster = new SparkStandalone(dir);
    try {
      cluster.masterUrl = cluster.startMaster(home);
      for (int i = 0; i < workers; i++) {
        String host = "127.0.0." + (i + 2);
        // The worker's executors keep their block manager's files there, not in /tmp.
        Path local = Files.createDirectories(dir.resolve("spark-local-" + i));
        cluster.launch(
            home,
            local,
            "org.apache.spark.deploy.worker.Worker",
            dir.resolve("spark-worker-" + i + ".log"),
            List.of(
                "--host",
                host,
                "--port",
                "0",
                "--webui-port",
                "0",
                "--cores",
                Integer.toString(cores),
                "--memory",
                "2g",
                "--work-dir",
                dir.resolve("spark-work-" + i).toString(),
                cluster.masterUrl));
      }
      cluster.awaitMasterLog(
          log -> count(log, REGISTERED) >= workers, "the registration of " + workers + " workers");
      return cluster;
    } catch (Exception | AssertionError e) {
      cluster.close();
      throw e;
    }
  }

  /** The URL to give {@code spark.master}. */
  String masterUrl() {
    return masterUrl;
  }

  /**
   * The settings a job needs on this cluster: the master, and the executors' class path (Spark's
   * jars, the shaded Faro client, the examples jar; as a user puts a shuffle manager's jar on
   * {@code spark.executor.extraClassPath}, since Spark 3.5 loads it before any added jar).
   */
  List<String> executorConf() throws IOException {
    String classpath =
        Files.readString(SparkJobRunner.property("faro.demo.sparkClasspath")).trim()
            + File.pathSeparator
            + SparkJobRunner.property("faro.demo.clientJar")
            + File.pathSeparator
            + SparkJobRunner.property("faro.demo.examplesJar");
    return List.of(
        "spark.master=" + masterUrl,
        "spark.executor.extraClassPath=" + classpath,
        "spark.executor.memory=1g");
  }

  private String startMaster(Path home) throws Exception {
    launch(
        home,
        null,
        "org.apache.spark.deploy.master.Master",
        masterLog,
        List.of("--host", "127.0.0.1", "--port", "0", "--webui-port", "0"));
    awaitMasterLog(log -> MASTER_URL.matcher(log).find(), "the master's URL");
    Matcher m = MASTER_URL.matcher(Files.readString(masterLog));
    assertThat(m.find()).isTrue();
    return m.group(1);
  }

  private void launch(Path home, Path localDirs, String mainClass, Path log, List<String> args)
      throws IOException {
    List<String> command =
        DemoJob.command(
            SparkJobRunner.property("faro.demo.sparkClasspath"),
            SparkJobRunner.property("faro.demo.clientJar"),
            SparkJobRunner.property("faro.demo.examplesJar"),
            mainClass,
            args);
    command.set(command.indexOf("-Xmx2g"), "-Xmx512m");
    command.add(1, "-Dlog4j2.configurationFile=" + home.resolve("log4j2.properties").toUri());
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> env = builder.environment();
    env.put("SPARK_HOME", home.toString());
    // Spark's launcher asks for the Scala version before it looks at the jars directory.
    env.put("SPARK_SCALA_VERSION", "2.12");
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.remove("SPARK_CONF_DIR");
    if (localDirs != null) {
      env.put("SPARK_LOCAL_DIRS", localDirs.toString());
    }
    processes.add(builder.start());
  }

  private interface LogCondition {
    boolean test(String log);
  }

  private void awaitMasterLog(LogCondition condition, String what) {
    // Another process: its log, polled, is the only signal.
    Eventually.awaitEvery(
        Duration.ofMillis(200),
        what + " in " + masterLog,
        Duration.ofSeconds(90),
        () -> {
          for (Process p : processes) {
            assertThat(p.isAlive())
                .as(
                    "a Spark daemon exited while waiting for "
                        + what
                        + "; logs in "
                        + masterLog.getParent())
                .isTrue();
          }
          try {
            return Files.exists(masterLog) ? Files.readString(masterLog) : "";
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        log -> condition.test(log));
  }

  private static int count(String text, String needle) {
    int n = 0;
    for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
      n++;
    }
    return n;
  }

  /** Kills the workers first (they kill their executors), then the master. */
  @Override
  public void close() throws InterruptedException {
    for (int i = processes.size() - 1; i >= 0; i--) {
      Process p = processes.get(i);
      p.destroy();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
