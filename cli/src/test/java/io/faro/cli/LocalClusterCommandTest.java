package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mistakes in local-cluster's flags are one line that says what to give instead, not a stack trace.
 */
class LocalClusterCommandTest {
  @TempDir Path tmp;
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return FaroCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
  }

  @Test
  void aWorkDirThatIsAFileIsNamedAndStartsNothing() throws IOException {
    Path file = Files.writeString(tmp.resolve("not-a-dir"), "x");

    assertThat(run("local-cluster", "--work-dir", file.toString(), "--workers", "1")).isEqualTo(2);

    assertThat(err.toString())
        .isEqualTo(
            "faro local-cluster: --work-dir "
                + file
                + " is a file, not a directory: "
                + "give a directory for the cluster's logs, data and cluster.json (it is created if missing), e.g. "
                + "--work-dir /tmp/faro-local"
                + System.lineSeparator());
    assertThat(out.toString()).isEmpty();
    assertThat(Files.readString(file)).as("the file is left alone").isEqualTo("x");
  }

  @Test
  void aWorkDirUnderAFileIsNamed() throws IOException {
    Path file = Files.writeString(tmp.resolve("not-a-dir"), "x");

    assertThat(run("local-cluster", "--work-dir", file.resolve("cluster").toString())).isEqualTo(2);

    assertThat(err.toString())
        .startsWith(
            "faro local-cluster: --work-dir "
                + file.resolve("cluster")
                + " cannot be created: "
                + file
                + " is a file, not a directory: give a directory");
  }

  @Test
  void stopWithAWorkDirThatIsAFileSaysSo() throws IOException {
    Path file = Files.writeString(tmp.resolve("not-a-dir"), "x");

    assertThat(run("local-cluster", "stop", "--work-dir", file.toString())).isEqualTo(2);

    assertThat(err.toString())
        .startsWith("faro local-cluster stop: --work-dir " + file + " is a file, not a directory");
  }

  @Test
  void aMissingSettingsFileIsNamed() {
    Path missing = tmp.resolve("faro.conf");

    assertThat(
            run(
                "local-cluster",
                "--work-dir",
                tmp.resolve("c").toString(),
                "--conf",
                missing.toString()))
        .isEqualTo(2);

    assertThat(err.toString())
        .startsWith("faro local-cluster: --conf " + missing + " does not exist");
    assertThat(tmp.resolve("c")).as("nothing started").doesNotExist();
  }

  @Test
  void aBadWorkerDirsSpecIsNamedAndStartsNothing() {
    Path work = tmp.resolve("c");

    assertThat(
            run(
                "local-cluster",
                "--work-dir",
                work.toString(),
                "--worker-dirs",
                "nvme:150m,floppy"))
        .isEqualTo(2);

    assertThat(err.toString())
        .startsWith(
            "faro local-cluster: --worker-dirs: 'floppy' names an unknown tier 'floppy': give a "
                + "comma-separated list of tier[:capacity][@DIR], tier one of nvme, ssd, hdd");
    assertThat(work).as("nothing started").doesNotExist();
  }

  @Test
  void aDirectoryThatDoesNotExistYetIsFine() {
    assertThat(LocalClusterCommand.whyNotAWorkDir(tmp.resolve("a/b/c"))).isNull();
    assertThat(LocalClusterCommand.whyNotAWorkDir(tmp)).isNull();
  }
}
