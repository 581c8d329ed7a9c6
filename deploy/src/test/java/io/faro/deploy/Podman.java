package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's podman for the container tests, configured for this kind of machine by a containers.conf
 * of its own (in target/, through CONTAINERS_CONF, so the host's configuration is left alone): the
 * runc runtime (crun refuses a mixed cgroup layout) and ulimits within the machine's hard limits
 * (podman's defaults exceed them, and a container that asks for more does not start). Images come
 * from no registry: docker/build-base-image.sh builds the base from Debian's packages.
 */
final class Podman {
  static final String BASE_IMAGE = "localhost/faro-base:bookworm";
  private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(15);

  private final Path conf;
  private final Path repository;

  private Podman(Path conf, Path repository) {
    this.conf = conf;
    this.repository = repository;
  }

  /**
   * Podman for the tests, or the test is skipped when the machine has none (.ci/run installs it:
   * podman, runc and debootstrap from Debian's packages, as root).
   */
  static Podman forTests() throws IOException {
    Assumptions.assumeTrue(
        onPath("podman") && onPath("debootstrap") && "root".equals(System.getProperty("user.name")),
        "podman, debootstrap and root are needed (.ci/run installs them with apt-get)");
    Path deploy = Path.of(System.getProperty("faro.deploy.dir"));
    Path conf = deploy.resolve("target/containers.conf");
    Files.createDirectories(conf.getParent());
    Files.writeString(
        conf,
        """
        # Written by the deploy tests (Podman.java): this machine's limits and runtime.
        [containers]
        default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
        [engine]
        runtime = "runc"
        """);
    return new Podman(conf, deploy.getParent());
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  /** The environment every podman (and podman-compose) command of the tests runs with. */
  Map<String, String> environment() {
    return Map.of("CONTAINERS_CONF", conf.toString());
  }

  /** A process builder for {@code command} with the tests' podman configuration. */
  ProcessBuilder builder(List<String> command) {
    ProcessBuilder b = new ProcessBuilder(command);
    b.environment().putAll(environment());
    return b;
  }

  /** Runs {@code podman args...}; its output goes to {@code log}. */
  int run(Path log, Duration timeout, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("podman"));
    command.addAll(List.of(args));
    return Processes.runLogged(builder(command), log, timeout);
  }

  /** Runs {@code podman args...} and returns its output; it must succeed. */
  String output(Path dir, Duration timeout, String... args)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile(dir, "podman", ".out");
    int code = run(out, timeout, args);
    String output = Files.readString(out);
    assertThat(code).as("podman %s:%n%s", String.join(" ", args), output).isZero();
    // The first line names the command (Processes.runLogged).
    return output.substring(output.indexOf('\n') + 1);
  }

  /** The base image from Debian's packages (built once: the script keeps an existing one). */
  void ensureBaseImage(Path log) throws IOException, InterruptedException {
    int code =
        Processes.runLogged(
            builder(
                List.of(
                    repository.resolve("docker/build-base-image.sh").toString(),
                    "--tag",
                    BASE_IMAGE)),
            log,
            BUILD_TIMEOUT);
    assertThat(code).as("docker/build-base-image.sh; see %s", log).isZero();
  }

  /**
   * Builds {@code tag} from {@code containerfile} (relative to the repository, its build context),
   * with {@code buildArgs} (name=value).
   */
  void build(String tag, String containerfile, Path log, String... buildArgs)
      throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(List.of("build", "--network", "host"));
    for (String a : buildArgs) {
      args.addAll(List.of("--build-arg", a));
    }
    args.addAll(List.of("-f", containerfile, "-t", tag, repository.toString()));
    int code = run(log, BUILD_TIMEOUT, args.toArray(String[]::new));
    assertThat(code).as("podman build of %s; see %s", tag, log).isZero();
  }

  Path repository() {
    return repository;
  }
}
