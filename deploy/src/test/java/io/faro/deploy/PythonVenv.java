package io.faro.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A Python virtual environment under target/, made with the machine's python3 and given packages
 * from PyPI once: a marker file names what was installed, so a later run reuses it.
 */
final class PythonVenv {
  private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(10);

  private PythonVenv() {}

  /**
   * The environment at {@code venv} with {@code requirement} (a pip requirement such as {@code
   * name==version}) installed; made or remade when it lacks it.
   */
  static Path ensure(Path venv, String requirement) throws IOException, InterruptedException {
    Path marker = venv.resolve(".faro-installed");
    if (Files.isRegularFile(marker)
        && Files.readAllLines(marker, StandardCharsets.UTF_8).contains(requirement)) {
      return venv;
    }
    Path log = venv.resolveSibling(venv.getFileName() + ".install.log");
    Files.createDirectories(venv.getParent());
    int made =
        Files.isExecutable(venv.resolve("bin/pip"))
            ? 0
            : run(List.of("python3", "-m", "venv", "--clear", venv.toString()), log);
    int installed =
        made != 0
            ? made
            : run(
                List.of(
                    venv.resolve("bin/pip").toString(),
                    "install",
                    "--disable-pip-version-check",
                    "--quiet",
                    requirement),
                log);
    if (installed != 0) {
      throw new IllegalStateException(
          "cannot install "
              + requirement
              + " into "
              + venv
              + " (exit "
              + installed
              + "): see "
              + log);
    }
    Files.writeString(
        marker,
        requirement + "\n",
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    return venv;
  }

  private static int run(List<String> command, Path log) throws IOException, InterruptedException {
    return Processes.runLogged(new ProcessBuilder(command), log, INSTALL_TIMEOUT);
  }
}
