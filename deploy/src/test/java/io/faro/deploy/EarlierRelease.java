package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.systemtests.SparkJobRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * An earlier release of Faro, built from this repository's history as its users got it: the
 * unpacked distribution, and the Spark client and examples jars with Spark's class path. Built once
 * into {@code root} (a later test of the same build reuses it).
 *
 * @param home the unpacked distribution (bin/faro, lib/, conf/)
 * @param tarball the same distribution as its tarball, as the Ansible role installs it
 * @param jars what a Spark job of that release runs
 */
record EarlierRelease(String commit, Path home, Path tarball, SparkJobRunner.Jars jars) {
  private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(20);

  /**
   * Builds {@code commit} of the repository at {@code repository} into {@code root}: its sources
   * from {@code git archive}, then {@code mvn package} of the distribution, the Spark 3 client and
   * the examples, without their tests, with this build's Maven and local repository.
   */
  static EarlierRelease build(Path repository, String commit, Path root)
      throws IOException, InterruptedException {
    Path src = root.resolve("src-" + commit);
    Path done = root.resolve("built-" + commit);
    if (!Files.exists(done)) {
      deleteRecursively(src);
      Files.createDirectories(src);
      Path log = root.resolve("build-" + commit + ".log");
      int archived =
          Processes.runLogged(
              new ProcessBuilder(
                  "sh",
                  "-c",
                  "git -C \"$0\" archive --format=tar \"$1\" | tar -x -C \"$2\"",
                  repository.toString(),
                  commit,
                  src.toString()),
              log,
              Duration.ofMinutes(2));
      assertThat(archived).as("git archive %s; see %s", commit, log).isZero();
      // Offline first: its dependencies are mostly this build's, already in the local repository.
      int built =
          Processes.runLogged(
              new ProcessBuilder(mavenCommand(true)).directory(src.toFile()), log, BUILD_TIMEOUT);
      if (built != 0) {
        built =
            Processes.runLogged(
                new ProcessBuilder(mavenCommand(false)).directory(src.toFile()),
                log,
                BUILD_TIMEOUT);
      }
      assertThat(built).as("the build of %s; see %s", commit, log).isZero();
      Files.writeString(done, commit + "\n");
    }
    Path dist;
    try (Stream<Path> found = Files.list(src.resolve("dist").resolve("target"))) {
      Path outer =
          found
              .filter(p -> Files.isDirectory(p) && p.getFileName().toString().startsWith("faro-"))
              .findFirst()
              .orElseThrow();
      // The assembly unpacks to faro-VERSION/faro-VERSION.
      dist =
          Files.isDirectory(outer.resolve(outer.getFileName()))
              ? outer.resolve(outer.getFileName())
              : outer;
    }
    Path clientJar;
    try (Stream<Path> found = Files.list(src.resolve("client-spark").resolve("target"))) {
      clientJar =
          found
              .filter(p -> p.getFileName().toString().matches("faro-client-spark-3-.*\\.jar"))
              .findFirst()
              .orElseThrow();
    }
    Path examples;
    try (Stream<Path> found = Files.list(src.resolve("examples").resolve("target"))) {
      examples =
          found
              .filter(
                  p -> p.getFileName().toString().matches("faro-examples-[^-]+(-SNAPSHOT)?\\.jar"))
              .findFirst()
              .orElseThrow();
    }
    Path tarball = src.resolve("dist").resolve("target").resolve(dist.getFileName() + ".tar.gz");
    assertThat(tarball).as("the tarball of %s", commit).isRegularFile();
    return new EarlierRelease(
        commit,
        dist,
        tarball,
        new SparkJobRunner.Jars(
            src.resolve("examples").resolve("target").resolve("spark-classpath.txt"),
            clientJar,
            examples));
  }

  /** This build's Maven, with its local repository. */
  private static List<String> mavenCommand(boolean offline) {
    List<String> mvn = new ArrayList<>();
    String home = System.getProperty("faro.maven.home", "");
    mvn.add(home.isEmpty() ? "mvn" : Path.of(home, "bin", "mvn").toString());
    mvn.addAll(List.of("-B", "-q", "-DskipTests", "-Dspotless.check.skip=true"));
    if (offline) {
      mvn.add("-o");
    }
    String repo = System.getProperty("faro.maven.repo", "");
    if (!repo.isEmpty()) {
      mvn.add("-Dmaven.repo.local=" + repo);
    }
    mvn.addAll(List.of("package", "-pl", "dist,client-spark,examples", "-am"));
    return mvn;
  }

  private static void deleteRecursively(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
