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
 * and stops the cluster. Spark's jars come from a Spark installation ({@code --spark-home} or
 * {@code SPARK_HOME}: its {@code jars/}), or in a built source checkout from the examples build's
 * class path.
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
      names = "--spark-home",
      description =
          "A Spark 3.5 or 4.x installation whose jars/ the job runs with (default: in a built"
              + " source checkout, the build's Spark 3.5; in a distribution, the SPARK_HOME"
              + " environment variable).")
  Path sparkHome;

  @Option(
      names = "--records",
      defaultValue = "2000000",
      description = "Records the job shuffles (default: ${DEFAULT-VALUE}).")
  long records;

  /** The Spark class path and the Faro jars of one run. */
  private record Jars(String sparkClasspath, Path clientJar, Path examplesJar) {}

  @Override
  public Integer call() throws Exception {
    Path home = Path.of(System.getProperty("faro.home", "."));
    Path spark = sparkHome;
    String sparkHomeEnv = System.getenv("SPARK_HOME");
    boolean built = Files.exists(home.resolve("examples/target/spark-classpath.txt"));
    if (spark == null && sparkHomeEnv != null && !sparkHomeEnv.isBlank()) {
      if (built) {
        // A source checkout runs its own build's Spark, whatever this machine's SPARK_HOME is.
        System.out.println(
            "Running with the build's Spark; SPARK_HOME ("
                + sparkHomeEnv
                + ") is used from a distribution, or here with --spark-home.");
      } else {
        spark = Path.of(sparkHomeEnv);
      }
    }
    Jars jars;
    try {
      jars = spark != null ? fromSparkHome(home, spark) : fromBuild(home);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
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
              jars.sparkClasspath(),
              jars.clientJar(),
              jars.examplesJar(),
              "io.faro.examples.ShuffleDemo",
              List.of(
                  "--master-endpoints",
                  cluster.masterEndpoint(),
                  "--records",
                  Long.toString(records)));
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

  /**
   * Spark's jars from {@code spark}'s {@code jars/}, and the distribution's (or the checkout's)
   * client jar of that Spark line and examples jar.
   *
   * @throws IllegalArgumentException saying what is missing
   */
  private static Jars fromSparkHome(Path home, Path spark) throws IOException {
    Path jarsDir = spark.resolve("jars");
    Path core = jar(jarsDir, "spark-core_");
    if (core == null) {
      throw new IllegalArgumentException(
          "No Spark installation at "
              + spark
              + " (--spark-home, or SPARK_HOME): it has no jars/spark-core_*.jar");
    }
    String name = core.getFileName().toString();
    String line;
    if (name.startsWith("spark-core_2.12-3.5")) {
      line = "3";
    } else if (name.startsWith("spark-core_2.13-4.")) {
      line = "4";
    } else {
      throw new IllegalArgumentException(
          "The Spark at "
              + spark
              + " is "
              + name
              + "; Faro's clients are for Spark 3.5 (Scala 2.12) and Spark 4.x (Scala 2.13)");
    }
    Path clientJar =
        first(
            jar(home.resolve("client"), "faro-client-spark-" + line + "-"),
            jar(
                home.resolve(line.equals("3") ? "client-spark/target" : "client-spark-4/target"),
                "faro-client-spark-" + line + "-"));
    Path examplesJar =
        first(
            jar(home.resolve("examples"), "faro-examples-"),
            jar(home.resolve("examples/target"), "faro-examples-"));
    if (clientJar == null || examplesJar == null) {
      throw new IllegalArgumentException(
          "Missing Faro's client jar for Spark "
              + line
              + " (client/faro-client-spark-"
              + line
              + "-*.jar) or the demo's jar (examples/faro-examples-*.jar) under "
              + home
              + ": run the demo from a Faro distribution, or build the checkout with `mvn"
              + " -DskipTests package`");
    }
    return new Jars(jarsDir.resolve("*").toString(), clientJar, examplesJar);
  }

  /**
   * The Spark the checkout's build resolved (examples/target/spark-classpath.txt) and its jars.
   *
   * @throws IllegalArgumentException saying how to get them
   */
  private static Jars fromBuild(Path home) throws IOException {
    Path sparkClasspath = home.resolve("examples/target/spark-classpath.txt");
    Path clientJar = jar(home.resolve("client-spark/target"), "faro-client-spark-3-");
    Path examplesJar = jar(home.resolve("examples/target"), "faro-examples-");
    if (!Files.exists(sparkClasspath) || clientJar == null || examplesJar == null) {
      throw new IllegalArgumentException(
          "No Spark to run the demo with: set SPARK_HOME (or pass --spark-home DIR) to a Spark"
              + " 3.5 or 4.x installation. In a source checkout, `mvn -DskipTests package` also"
              + " provides one (the demo then uses the build's Spark 3.5 from "
              + sparkClasspath
              + ").");
    }
    return new Jars(Files.readString(sparkClasspath).trim(), clientJar, examplesJar);
  }

  private static Path first(Path a, Path b) {
    return a != null ? a : b;
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
