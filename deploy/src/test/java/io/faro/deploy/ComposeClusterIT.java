package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import io.faro.common.testing.Eventually;
import io.faro.examples.CompareJobs;
import io.faro.systemtests.SparkJobRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * docker/ for real, with Debian's podman: the image is built from docker/Dockerfile on a base made
 * from Debian's packages (docker/build-base-image.sh: no registry), podman-compose (from PyPI)
 * starts the compose file's secrets service, three masters and three workers on the host's network,
 * and each process's own health check must pass. A Spark job on the host (its own JVM) then
 * shuffles through them while worker w1 is stopped as compose stops a service (SIGTERM, with the
 * file's stop_grace_period): the worker seals what it holds and exits 0 within its graceful
 * timeout, comes back with {@code start}, and the job gives the built-in shuffle's checksum with no
 * stage re-run and no failed task.
 */
class ComposeClusterIT {
  private static final String PROJECT = "faro-it";
  private static final String SCALE = "0.02";
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(5);
  private static final String PODMAN_COMPOSE = "podman-compose==1.6.0";
  private static final String MASTERS = "127.0.0.1:9097,127.0.0.1:9098,127.0.0.1:9099";
  private static final List<String> SERVICES = List.of("m1", "m2", "m3", "w1", "w2", "w3");

  /** Every port the compose file's processes listen on, on all of the host's addresses. */
  private static final List<Integer> PORTS =
      List.of(
          9097, 9098, 9099, 9872, 9873, 9874, 9096, 9196, 9296, // masters
          9100, 9101, 9102, 9103, 9110, 9111, 9112, 9113, 9120, 9121, 9122, 9123); // workers

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private Podman podman;
  private Path compose;
  private Path log;

  @Test
  void theComposeFilesClusterServesASparkJobThroughAGracefulStopOfAWorker() throws Exception {
    podman = Podman.forTests();
    log = dir.resolve("podman.log");
    podman.ensureBaseImage(log);
    String version = System.getProperty("faro.version");
    podman.build(
        "localhost/faro:dev",
        "docker/Dockerfile",
        log,
        "BASE_IMAGE=" + Podman.BASE_IMAGE,
        "FARO_VERSION=" + version);
    Path venv = PythonVenv.ensure(Path.of(System.getProperty("faro.compose.venv")), PODMAN_COMPOSE);
    compose = venv.resolve("bin/podman-compose");
    for (int port : PORTS) {
      assertThat(free(port)).as("port %d, which docker/compose.yml uses, is free", port).isTrue();
    }
    List<String> anonymousVolumes = new ArrayList<>();
    try {
      assertThat(compose("up", "-d")).as("podman-compose up; see %s", log).isZero();
      anonymousVolumes.addAll(anonymousVolumes());
      for (String s : SERVICES) {
        awaitHealthy(s);
      }
      // The operator's view, from inside a master's container with the admin secret of the volume.
      String workers =
          podman.output(
              dir,
              COMMAND_TIMEOUT,
              "exec",
              container("m1"),
              "/opt/faro/bin/faro",
              "admin",
              "workers",
              "--json",
              "--conf",
              "/opt/faro/conf/faro-defaults.conf",
              "--endpoints",
              MASTERS);
      assertThat(Json.strings(workers, "state")).containsExactly("serving", "serving", "serving");

      SparkJobRunner runner = new SparkJobRunner(dir);
      String expected = Json.string(runner.builtin("large", SCALE, List.of()), "checksum");
      SparkJobRunner.Started job =
          runner.start(
              "large",
              "faro",
              SCALE,
              MASTERS,
              "compose",
              List.of(
                  // Maps push for half a minute: the stop lands while they do.
                  CompareJobs.MAP_PAUSE_KEY + "=100", "spark.faro.client.push.batch.size=16k"));
      Eventually.awaitEvery(
          Duration.ofMillis(300),
          "pushed bytes on w1",
          Duration.ofMinutes(2),
          () -> {
            assertThat(job.process().isAlive()).as("the job runs; see %s", job.output()).isTrue();
            return metric(9103, "faro_worker_pushed_bytes_total");
          },
          bytes -> bytes > 0);

      long stopStart = System.nanoTime();
      assertThat(compose("stop", "w1")).as("podman-compose stop w1; see %s", log).isZero();
      long stopMs = (System.nanoTime() - stopStart) / 1_000_000;
      String state =
          podman.output(
              dir,
              COMMAND_TIMEOUT,
              "inspect",
              container("w1"),
              "--format",
              "{{.State.ExitCode}} {{.State.Status}}");
      assertThat(state.trim()).as("w1 after its stop (%d ms)", stopMs).isEqualTo("0 exited");
      String w1Log = podman.output(dir, COMMAND_TIMEOUT, "logs", container("w1"));
      assertThat(w1Log).contains("SIGTERM received: stopping the worker");
      Matcher sealed = Pattern.compile("sealed (\\d+) partition locations").matcher(w1Log);
      assertThat(sealed.find()).as(w1Log).isTrue();
      assertThat(Long.parseLong(sealed.group(1))).as("partitions w1 sealed").isPositive();
      // Well within faro.worker.graceful.timeout (60 s): compose never had to SIGKILL it.
      assertThat(stopMs).as("w1's graceful stop").isLessThan(60_000);
      System.out.printf("compose stopped w1 gracefully in %d ms%n", stopMs);

      assertThat(compose("start", "w1")).as("podman-compose start w1; see %s", log).isZero();
      awaitHealthy("w1");

      String result = job.awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
    } finally {
      compose("down", "-v");
      for (String v : anonymousVolumes) {
        podman.run(log, COMMAND_TIMEOUT, "volume", "rm", "-f", v);
      }
    }
  }

  private String container(String service) {
    return PROJECT + "_" + service + "_1";
  }

  private int compose(String... args) throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(
            List.of(
                compose.toString(),
                "-p",
                PROJECT,
                "-f",
                podman.repository().resolve("docker/compose.yml").toString()));
    command.addAll(List.of(args));
    ProcessBuilder b = podman.builder(command);
    b.environment().put("FARO_ADVERTISED_HOST", "127.0.0.1");
    return Processes.runLogged(b, log, COMMAND_TIMEOUT);
  }

  /**
   * Runs the service's own health check (compose.yml's) until it passes: without systemd on the
   * host podman schedules no checks itself, so the test runs them as its timer would.
   */
  private void awaitHealthy(String service) {
    Eventually.awaitEvery(
        Duration.ofSeconds(1),
        service + "'s health check to pass",
        Duration.ofMinutes(2),
        () -> {
          try {
            return podman.run(
                log, Duration.ofSeconds(30), "healthcheck", "run", container(service));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
        },
        code -> code == 0);
  }

  /**
   * The anonymous volumes of the project's containers (the image's VOLUME lines a service did not
   * name), which {@code down -v} leaves behind.
   */
  private List<String> anonymousVolumes() throws IOException, InterruptedException {
    String names =
        podman.output(
            dir,
            COMMAND_TIMEOUT,
            "ps",
            "-a",
            "--filter",
            "label=io.podman.compose.project=" + PROJECT,
            "--format",
            "{{.Names}}");
    List<String> volumes = new ArrayList<>();
    for (String name : names.trim().split("\\s+")) {
      String out =
          podman.output(
              dir,
              COMMAND_TIMEOUT,
              "inspect",
              name,
              "--format",
              "{{range .Mounts}}{{.Name}} {{end}}");
      List.of(out.trim().split("\\s+")).stream()
          .filter(v -> v.matches("[0-9a-f]{64}"))
          .forEach(volumes::add);
    }
    assertThat(names.trim().split("\\s+")).as("the project's containers").hasSize(7);
    return volumes;
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** A counter of a worker's Prometheus page (its HTTP port), summed over its labels. */
  private static double metric(int httpPort, String name) {
    try {
      String page =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                      .timeout(Duration.ofSeconds(5))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      return page.lines()
          .filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .sum();
    } catch (IOException e) {
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }
}
