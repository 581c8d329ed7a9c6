package io.faro.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code faro demo}: starts a local cluster, runs a Spark job (local mode, its own JVM, with only
 * the shaded client jar added) through it and with Spark's built-in shuffle, prints both results,
 * and stops the cluster.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description =
        "Runs a Spark job through a fresh local Faro cluster and with Spark's built-in shuffle.")
final class DemoCommand implements Callable<Integer> {
  @Option(
      names = "--work-dir",
      defaultValue = "target/faro-demo",
      description = "Work directory (default: ${DEFAULT-VALUE}).")
  Path workDir;

  @Option(
      names = "--workers",
      defaultValue = "2",
      description = "Workers to start (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(
      names = "--records",
      defaultValue = "2000000",
      description = "Records the job shuffles (default: ${DEFAULT-VALUE}).")
  long records;

  @Override
  public Integer call() throws Exception {
    Path home = Path.of(System.getProperty("faro.home", "."));
    Path sparkClasspath = home.resolve("examples/target/spark-classpath.txt");
    Path clientJar = jar(home.resolve("client-spark/target"), "faro-client-spark-3-");
    Path examplesJar = jar(home.resolve("examples/target"), "faro-examples-");
    if (!Files.exists(sparkClasspath) || clientJar == null || examplesJar == null) {
      System.err.println(
          "Missing the Spark class path, the client jar or the examples jar under "
              + home
              + ": build first with `mvn -DskipTests package`.");
      return 2;
    }
    try (LocalCluster cluster =
        LocalCluster.start(workDir, LocalCluster.Options.workers(workers))) {
      System.out.println(
          "Started a local Faro cluster: master at "
              + cluster.masterEndpoint()
              + ", "
              + workers
              + " workers ("
              + cluster.workDir().resolve(LocalCluster.CLUSTER_FILE)
              + ")");
      List<String> command =
          DemoJob.command(
              sparkClasspath, clientJar, examplesJar, cluster.masterEndpoint(), records);
      Process job = new ProcessBuilder(command).inheritIO().start();
      int code = job.waitFor();
      System.out.println(
          code == 0
              ? "Demo finished."
              : "Demo job failed with exit code "
                  + code
                  + "; worker and master logs are under "
                  + cluster.workDir());
      return code;
    } catch (IOException e) {
      System.err.println("Demo failed: " + e);
      return 1;
    }
  }

  private static Path jar(Path dir, String prefix) throws IOException {
    if (!Files.isDirectory(dir)) {
      return null;
    }
    try (var files = Files.list(dir)) {
      return files
          .filter(f -> f.getFileName().toString().startsWith(prefix))
          .filter(f -> f.getFileName().toString().endsWith(".jar"))
          .filter(f -> !f.getFileName().toString().contains("-tests"))
          .findFirst()
          .orElse(null);
    }
  }
}
