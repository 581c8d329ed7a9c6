package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.DemoJob;
import io.faro.examples.CompareJobs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs one {@link CompareJobs} job in a fresh JVM built as the demo's is (Spark's jars, the shaded
 * client jar, the examples jar), for the tests that compare Faro with Spark's built-in shuffle
 * through real processes (here, and in deploy's through the test-jar).
 */
public final class SparkJobRunner {
  private final Path dir;
  private final String heap;
  private final Jars jars;

  /**
   * What a job's JVM runs: Spark's class path (a file of entries), the shaded client jar and the
   * examples jar, of this build or of another release's.
   */
  public record Jars(Path sparkClasspath, Path clientJar, Path examplesJar) {
    /** This build's, as the build names them in system properties. */
    public static Jars ofThisBuild() {
      return new Jars(
          property("faro.demo.sparkClasspath"),
          property("faro.demo.clientJar"),
          property("faro.demo.examplesJar"));
    }
  }

  public SparkJobRunner(Path dir) {
    this(dir, null, null);
  }

  /** A runner whose jobs run {@code jars} (e.g. an earlier release's client and examples). */
  public SparkJobRunner(Path dir, Jars jars) {
    this(dir, null, jars);
  }

  private SparkJobRunner(Path dir, String heap, Jars jars) {
    this.dir = dir;
    this.heap = heap;
    this.jars = jars;
  }

  /**
   * A runner whose jobs' JVMs have {@code heap} (e.g. "512m") as -Xmx instead of the demo's: in
   * local mode that is the driver's heap.
   */
  public SparkJobRunner withHeap(String heap) {
    return new SparkJobRunner(dir, heap, jars);
  }

  /**
   * Starts {@code job} in {@code mode} ("builtin" or "faro"); its output goes to a file in the work
   * dir.
   */
  public Started start(String job, String mode, String scale, String masterEndpoints, String name)
      throws Exception {
    return start(job, mode, scale, masterEndpoints, name, List.of());
  }

  /**
   * As {@link #start}, with Spark settings {@code key=value} (e.g. spark.faro.* client settings).
   */
  public Started start(
      String job, String mode, String scale, String masterEndpoints, String name, List<String> conf)
      throws Exception {
    Path output = dir.resolve(name + ".out");
    List<String> args =
        new ArrayList<>(
            List.of(
                "--job",
                job,
                "--mode",
                mode,
                "--scale",
                scale,
                "--local-dir",
                dir.resolve("spark-local-" + name).toString()));
    conf.forEach(c -> args.addAll(List.of("--conf", c)));
    if (mode.equals("faro")) {
      args.addAll(List.of("--master-endpoints", masterEndpoints));
    }
    Jars used = jars != null ? jars : Jars.ofThisBuild();
    List<String> command =
        new ArrayList<>(
            DemoJob.command(
                used.sparkClasspath(),
                used.clientJar(),
                used.examplesJar(),
                CompareJobs.class.getName(),
                args));
    // C1 only: these runs are too short for C2 to pay back its compile time (about 20% faster).
    command.add(1, "-XX:TieredStopAtLevel=1");
    if (heap != null) {
      // After the demo's -Xmx: the last one counts.
      command.add(command.indexOf("-cp"), "-Xmx" + heap);
    }
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    return new Started(process, output);
  }

  /**
   * The JSON line of {@code job} at {@code scale} with Spark's built-in shuffle and {@code conf}:
   * the answer the tests hold Faro's against. A build runs each such job once: the line is kept in
   * the directory of system property {@code faro.builtin.cache} (the build's target/, shared by the
   * modules' tests), under a key of the job, its settings, the heap and the jars it ran, so that a
   * rebuilt examples jar or another release's runs it again. Without that property every call runs
   * the job.
   */
  public String builtin(String job, String scale, List<String> conf) throws Exception {
    Jars used = jars != null ? jars : Jars.ofThisBuild();
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    List<String> key = new ArrayList<>(List.of(job, scale, String.valueOf(heap)));
    key.addAll(conf);
    for (Path jar : List.of(used.sparkClasspath(), used.clientJar(), used.examplesJar())) {
      key.add(jar.toAbsolutePath() + "@" + Files.size(jar) + "@" + Files.getLastModifiedTime(jar));
    }
    digest.update(String.join("\n", key).getBytes(StandardCharsets.UTF_8));
    String name =
        "builtin-" + job + "-" + scale + "-" + HexFormat.of().formatHex(digest.digest(), 0, 8);
    String cacheDir = System.getProperty("faro.builtin.cache");
    Path cached = cacheDir == null ? null : Path.of(cacheDir).resolve(name);
    if (cached != null && Files.isRegularFile(cached)) {
      return Files.readString(cached).trim();
    }
    String line = start(job, "builtin", scale, "", name, conf).awaitResult();
    if (cached != null) {
      Files.createDirectories(cached.getParent());
      Path partial = Files.createTempFile(cached.getParent(), name, ".tmp");
      Files.writeString(partial, line + "\n");
      Files.move(
          partial, cached, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
    return line;
  }

  /** Runs {@code job} to the end; returns its JSON line. */
  public String run(String job, String mode, String scale, String masterEndpoints, String name)
      throws Exception {
    return start(job, mode, scale, masterEndpoints, name).awaitResult();
  }

  /** A job's JVM and the file its output goes to. */
  public record Started(Process process, Path output) {
    /** Waits for the job (at most 3 minutes), checks it succeeded, returns its JSON line. */
    public String awaitResult() throws Exception {
      return awaitResult(java.time.Duration.ofMinutes(3));
    }

    /**
     * As {@link #awaitResult()}, waiting at most {@code timeout} (a job paced to outlast a roll).
     */
    public String awaitResult(java.time.Duration timeout) throws Exception {
      assertThat(process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
          .as("finished within %s; output in %s", timeout, output)
          .isTrue();
      String out = Files.readString(output);
      assertThat(process.exitValue()).as(out).isZero();
      // The lifecycle manager's check of finished map stage attempts never fires in these jobs.
      assertThat(out)
          .as("a generation lost because a stage attempt ended without a map")
          .doesNotContain("never ended in it");
      List<String> lines = out.lines().filter(l -> l.startsWith("{\"job\"")).toList();
      assertThat(lines).as(out).hasSize(1);
      return lines.get(0);
    }
  }

  /** The path in system property {@code name}, set by the build; it must exist. */
  static Path property(String name) {
    Path p = Path.of(System.getProperty(name));
    assertThat(p).as(name).exists();
    return p;
  }
}
