package io.faro.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a command to its end for a test: its output in a file, killed when it overruns. */
final class Processes {
  private Processes() {}

  /** A finished command's exit code and output (stdout and stderr together). */
  record Result(int exitCode, String output) {}

  /**
   * Runs {@code command}, its output (after a first line naming it) going to a file in {@code dir}.
   *
   * @throws IllegalStateException when it does not end within {@code timeout} (it is killed)
   */
  static Result run(List<String> command, Path dir, Duration timeout)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile(dir, "process", ".out");
    int code = runLogged(new ProcessBuilder(command), out, timeout);
    return new Result(code, Files.readString(out));
  }

  /**
   * Runs {@code builder}'s command with its output appended to {@code log}, after a line naming it;
   * returns its exit code.
   *
   * @throws IllegalStateException when it does not end within {@code timeout} (it is killed)
   */
  static int runLogged(ProcessBuilder builder, Path log, Duration timeout)
      throws IOException, InterruptedException {
    String command = String.join(" ", builder.command());
    Files.writeString(
        log,
        "$ " + command + "\n",
        java.nio.charset.StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    Process p =
        builder
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      throw new IllegalStateException(command + " did not end within " + timeout + "; see " + log);
    }
    return p.exitValue();
  }
}
