package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stranger on the network finds a running job's lifecycle port and sends a MapperEnd for every
 * map of its shuffles, each claiming a made-up attempt with no batches: had one won, the real maps
 * would be told their stage ended and readers would read nothing, and the job would return an empty
 * result with status ok. With the settings a new user has (no auth setting: the local cluster makes
 * its secrets) and with faro.auth.enabled=false set explicitly, every forged request is refused
 * (the executors prove an identity the driver made, whatever the cluster does) and the job's result
 * equals the built-in shuffle's. Real processes: a local cluster, a Spark job in its own JVM.
 */
class ForgedMapperEndIT {
  private static final String SCALE = "0.05";
  // The large job at SCALE: 48 * sqrt(0.05) map tasks.
  private static final int MAPS = 11;
  private static final Pattern LIFECYCLE =
      Pattern.compile("Faro lifecycle manager for \\S+ at (\\S+:\\d+)");

  @TempDir Path dir;

  @Test
  void forgedMapperEndsAreRefusedWithTheDefaultsAndWithAuthenticationOff() throws Exception {
    SparkJobRunner runner = new SparkJobRunner(dir);
    String expected = Json.string(runner.builtin("large", SCALE, List.of()), "checksum");

    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("defaults"), LocalCluster.Options.workers(1))) {
      assertThat(cluster.adminConf())
          .as("secrets made for a cluster with no auth setting")
          .isPresent();
      forgeDuring(runner, cluster, "defaults", expected);
    }
    Path open = Files.writeString(dir.resolve("open.conf"), "faro.auth.enabled=false\n");
    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("open"), LocalCluster.Options.workers(1).withConf(open))) {
      assertThat(cluster.adminConf()).isEmpty();
      forgeDuring(runner, cluster, "open", expected);
    }
  }

  /** Runs the large job on {@code cluster} while a stranger forges MapperEnds; checks it all. */
  private void forgeDuring(
      SparkJobRunner runner, LocalCluster cluster, String name, String expected) throws Exception {
    // Maps that push slowly: the forger has the whole map stage to act in.
    SparkJobRunner.Started job =
        runner.start(
            "large",
            "faro",
            SCALE,
            cluster.masterEndpoint(),
            "faro-" + name,
            List.of("spark.examples.mapPauseMillis=20"));
    HostPort lifecycle = awaitLifecycle(job);
    int refused = 0;
    NetworkSettings network =
        NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "1"));
    try (ClientPool stranger = new ClientPool("stranger", network);
        ClientPool guesser =
            new ClientPool(
                "guesser",
                network,
                AuthOptions.Credentials.app(
                    Identity.app(
                        new io.faro.common.id.AppId("guessed-app"),
                        io.faro.common.auth.AppSecrets.nonce(
                            io.faro.common.auth.AppSecrets.token())),
                    Secret.of("a-guess-at-the-app-secret")))) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (job.process().isAlive() && System.nanoTime() < deadline) {
        for (int shuffle = 0; shuffle < 2; shuffle++) {
          for (int map = 0; map < MAPS; map++) {
            MapperEndRequest forged =
                MapperEndRequest.newBuilder()
                    .setShuffleId(shuffle)
                    .setMapId(map)
                    .setAttemptId(7)
                    .setNumMaps(MAPS)
                    .build();
            for (ClientPool pool : List.of(stranger, guesser)) {
              try {
                Futures.await(
                    pool.call(lifecycle, forged, MapperEndResponse.class),
                    Duration.ofSeconds(10),
                    "a forged MapperEnd");
                throw new AssertionError("a forged MapperEnd was answered");
              } catch (FaroException e) {
                // Refused, or sent on a connection the driver was closing after refusing the one
                // before (or the job ended meanwhile): never answered.
                assertThat(e.code())
                    .as(e.getMessage())
                    .isIn(ErrorCode.UNAUTHENTICATED, ErrorCode.CONNECTION_FAILED);
                if (e.code() == ErrorCode.UNAUTHENTICATED) {
                  refused++;
                }
              }
            }
          }
        }
      }
    }
    String result = job.awaitResult();
    assertThat(refused).as("forged requests refused while the job ran").isGreaterThan(4 * MAPS);
    assertThat(Json.string(result, "checksum")).isEqualTo(expected);
    assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
    assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
  }

  /** Where the job's driver serves its executors, from its log line. */
  private static HostPort awaitLifecycle(SparkJobRunner.Started job) throws Exception {
    java.util.concurrent.atomic.AtomicReference<HostPort> found =
        new java.util.concurrent.atomic.AtomicReference<>();
    io.faro.common.testing.Eventually.await(
        "the job's lifecycle manager in " + job.output(),
        Duration.ofSeconds(60),
        () -> {
          Matcher m = LIFECYCLE.matcher(read(job.output()));
          if (m.find()) {
            found.set(HostPort.parse(m.group(1)));
          }
          return found.get() != null || !job.process().isAlive();
        });
    assertThat(found.get()).as(read(job.output())).isNotNull();
    return found.get();
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
