package io.faro.systemtests;

import io.faro.cli.FaroCli;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@code bin/faro} as a test runs it: a new JVM on the test's class path. */
public final class FaroCommand {
  private FaroCommand() {}

  /**
   * Runs {@code bin/faro ARGS} (e.g. {@code admin masters --json --endpoints ...}) in a new JVM
   * with the class path the cluster's processes use; returns its exit code and output. For tests
   * that drive a cluster the way an operator does.
   */
  public static CommandResult run(Duration timeout, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-Xshare:auto");
    String log4j = System.getProperty("log4j2.configurationFile");
    if (log4j != null) {
      command.add("-Dlog4j2.configurationFile=" + log4j);
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(FaroCli.class.getName());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      byte[] output = process.getInputStream().readAllBytes();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(
            "faro " + String.join(" ", args) + " did not finish within " + timeout);
      }
      return new CommandResult(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running faro " + String.join(" ", args));
    }
  }

  /** What a {@link #run} command returned. */
  public record CommandResult(int exitCode, String output) {}
}
