package io.faro.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of the demo's Spark job: its own JVM, with Spark's jars, the shaded Faro client
 * jar and the job's jar, and nothing else of Faro, as a user's application would run.
 */
public final class DemoJob {
  private DemoJob() {}

  /**
   * @param sparkClasspath a file holding Spark's class path (written by the examples build)
   */
  public static List<String> command(
      Path sparkClasspath, Path clientJar, Path examplesJar, String masterEndpoints, long records)
      throws IOException {
    return command(
        sparkClasspath,
        clientJar,
        examplesJar,
        "io.faro.examples.ShuffleDemo",
        List.of("--master-endpoints", masterEndpoints, "--records", Long.toString(records)));
  }

  /** The same class path and JVM options, running {@code mainClass} with {@code args}. */
  public static List<String> command(
      Path sparkClasspath, Path clientJar, Path examplesJar, String mainClass, List<String> args)
      throws IOException {
    return command(
        Files.readString(sparkClasspath).trim(), clientJar, examplesJar, mainClass, args);
  }

  /**
   * As {@link #command(Path, Path, Path, String, List)}, with Spark's class path given (entries
   * separated by the path separator; a {@code dir/*} entry stands for every jar in dir).
   */
  public static List<String> command(
      String sparkClasspath,
      Path clientJar,
      Path examplesJar,
      String mainClass,
      List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx2g");
    // The module openings Spark 3.5 needs on Java 17.
    for (String p :
        List.of(
            "java.lang",
            "java.lang.invoke",
            "java.lang.reflect",
            "java.io",
            "java.net",
            "java.nio",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "sun.nio.ch",
            "sun.nio.cs",
            "sun.security.action",
            "sun.util.calendar")) {
      command.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
    }
    command.add("-Djdk.reflect.useDirectMethodHandle=false");
    command.add("-cp");
    command.add(sparkClasspath + File.pathSeparator + clientJar + File.pathSeparator + examplesJar);
    command.add(mainClass);
    command.addAll(args);
    return command;
  }
}
