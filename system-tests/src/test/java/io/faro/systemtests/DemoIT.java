package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.DemoJob;
import io.faro.cli.LocalCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user does: a Faro cluster of real processes (one master, two workers), and an unmodified
 * Spark application run in its own JVM with only the shaded client jar and the Faro settings added.
 * The job prints its result with Spark's built-in shuffle and with Faro, and exits non-zero if they
 * differ.
 */
class DemoIT {
  private static Path property(String name) {
    Path p = Path.of(System.getProperty(name));
    assertThat(p).as(name).exists();
    return p;
  }

  @Test
  void aPlainSparkJobWithTheShadedJarGetsTheBuiltInShufflesResult(@TempDir Path dir)
      throws Exception {
    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(2))) {
      Path output = dir.resolve("job.out");
      List<String> command =
          DemoJob.command(
              property("faro.demo.sparkClasspath"),
              property("faro.demo.clientJar"),
              property("faro.demo.examplesJar"),
              cluster.masterEndpoint(),
              300_000);
      Process job =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .start();
      assertThat(job.waitFor(5, TimeUnit.MINUTES)).as("job finished; output in " + output).isTrue();
      String out = Files.readString(output);
      assertThat(job.exitValue()).as(out).isZero();
      // Not a silent fall back: the second run really used Faro's shuffle manager.
      assertThat(out)
          .contains("With Faro (io.faro.spark.FaroShuffleManager): 1000 groups")
          .contains("RESULT: identical");
    }
  }
}
