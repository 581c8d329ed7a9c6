package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `bin/faro demo` from the unpacked distribution, as a user of the tarball (or of the Ansible role,
 * which installs it) runs it: with SPARK_HOME pointing at a Spark 3.5 installation (a jars/
 * directory assembled here from the build's Spark dependencies) it runs the demo job through a
 * local cluster and with the built-in shuffle; without it, it says what to set.
 */
class DistributionDemoIT {
  @TempDir Path dir;

  @Test
  void theDistributionsDemoRunsWithTheSparkOfSparkHome() throws Exception {
    Path tarball = Path.of(System.getProperty("faro.dist.tarball"));
    Process untar =
        new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", dir.toString())
            .inheritIO()
            .start();
    assertThat(untar.waitFor()).isZero();
    Path faro;
    try (var entries = Files.list(dir)) {
      faro =
          entries
              .filter(p -> p.getFileName().toString().startsWith("faro-"))
              .findFirst()
              .orElseThrow();
    }
    assertThat(faro.resolve("examples")).isDirectoryContaining("glob:**/faro-examples-*.jar");

    // Without Spark: the message names what to set.
    Process none =
        start(
            faro, Map.of(), dir.resolve("none.out"), "--work-dir", dir.resolve("none").toString());
    assertThat(none.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(none.exitValue()).isEqualTo(2);
    assertThat(Files.readString(dir.resolve("none.out")))
        .contains("set SPARK_HOME")
        .contains("--spark-home");

    // A Spark 3.5 installation's layout: its jars in SPARK_HOME/jars.
    Path spark = dir.resolve("spark-3.5");
    Path jars = Files.createDirectories(spark.resolve("jars"));
    String classpath =
        Files.readString(Path.of(System.getProperty("faro.demo.sparkClasspath"))).trim();
    for (String entry : classpath.split(File.pathSeparator)) {
      Path jar = Path.of(entry);
      if (jar.getFileName().toString().endsWith(".jar")
          && !Files.exists(jars.resolve(jar.getFileName()))) {
        Files.createSymbolicLink(jars.resolve(jar.getFileName()), jar);
      }
    }
    Path output = dir.resolve("demo.out");
    Process demo =
        start(
            faro,
            Map.of("SPARK_HOME", spark.toString()),
            output,
            "--work-dir",
            dir.resolve("demo").toString(),
            "--workers",
            "1",
            "--records",
            "200000");
    assertThat(demo.waitFor(5, TimeUnit.MINUTES)).as("demo finished; output in " + output).isTrue();
    String out = Files.readString(output);
    assertThat(demo.exitValue()).as(out).isZero();
    assertThat(out)
        .contains("With Faro (io.faro.spark.FaroShuffleManager)")
        .contains("RESULT: identical")
        .contains("Demo finished.");
  }

  private static Process start(Path faro, Map<String, String> env, Path output, String... args)
      throws Exception {
    List<String> command =
        new java.util.ArrayList<>(List.of(faro.resolve("bin/faro").toString(), "demo"));
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
    builder.environment().remove("SPARK_HOME");
    builder.environment().putAll(env);
    return builder.start();
  }
}
