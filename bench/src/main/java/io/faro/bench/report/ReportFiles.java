package io.faro.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Writing a report where tools pick it up. */
public final class ReportFiles {
  private ReportFiles() {}

  /**
   * Writes {@code text} to {@code file}, creating its directory: through a temporary file moved
   * into place, so that a tool watching for the report never reads half of it.
   */
  public static void writeAtomically(Path file, String text) throws IOException {
    Path absolute = file.toAbsolutePath();
    if (absolute.getParent() != null) {
      Files.createDirectories(absolute.getParent());
    }
    Path temporary = absolute.resolveSibling(absolute.getFileName() + ".tmp");
    Files.writeString(temporary, text);
    Files.move(
        temporary, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
