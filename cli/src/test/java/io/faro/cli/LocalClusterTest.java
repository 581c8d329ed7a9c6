package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.testing.Eventually;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `faro local-cluster` with real processes: they start, register, are described, and stop. */
class LocalClusterTest {
  /**
   * A stop's members may stay zombies for a while when the launcher detached (init reaps them, late
   * on some machines): a start right after that stop must not take them for a running cluster. The
   * zombie here is a real one: a child whose parent execs into a process that never reaps.
   */
  @Test
  void startsWhereTheLastClustersMembersAreZombiesNotReapedYet(@TempDir Path dir) throws Exception {
    Process parent =
        new ProcessBuilder("sh", "-c", "sleep 0.1 & echo $!; exec sleep 60")
            .redirectErrorStream(true)
            .start();
    try {
      long zombie =
          Long.parseLong(
              new java.io.BufferedReader(
                      new java.io.InputStreamReader(
                          parent.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII))
                  .readLine()
                  .trim());
      Path stat = Path.of("/proc", Long.toString(zombie), "stat");
      Eventually.await(
          "the child became a zombie",
          () -> {
            try {
              String line = Files.readString(stat);
              return line.charAt(line.lastIndexOf(')') + 2) == 'Z';
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          });
      assertThat(ProcessHandle.of(zombie))
          .hasValueSatisfying(h -> assertThat(h.isAlive()).isTrue());
      Files.writeString(
          dir.resolve(LocalCluster.CLUSTER_FILE),
          "{\"workDir\": \""
              + dir
              + "\", \"masters\": [{\"name\": \"master-0\", \"role\": \"master\", \"pid\": "
              + zombie
              + "}], \"workers\": []}");

      try (LocalCluster cluster = LocalCluster.start(dir, LocalCluster.Options.workers(1))) {
        assertThat(cluster.members()).hasSize(2);
        assertThat(Json.numbers(Files.readString(dir.resolve(LocalCluster.CLUSTER_FILE)), "pid"))
            .doesNotContain(zombie);
      }
    } finally {
      parent.destroyForcibly();
      parent.waitFor();
    }
  }

  @Test
  void startsDescribesAndStopsRealProcesses(@TempDir Path dir) throws Exception {
    List<ProcessHandle> processes;
    try (LocalCluster cluster = LocalCluster.start(dir, LocalCluster.Options.workers(2))) {
      String json = Files.readString(dir.resolve(LocalCluster.CLUSTER_FILE));
      assertThat(Json.numbers(json, "pid")).hasSize(3);
      assertThat(json)
          .contains("\"spark.shuffle.manager\": \"io.faro.spark.FaroShuffleManager\"")
          .contains("\"spark.faro.master.endpoints\": \"" + cluster.masterEndpoint() + "\"")
          .contains("\"pushPort\"")
          .contains("\"fetchPort\"")
          .contains("\"dirs\"");
      processes = cluster.members().stream().map(m -> m.process().toHandle()).toList();
      assertThat(processes).allMatch(ProcessHandle::isAlive);

      try (ClientPool pool = new ClientPool("test", NetworkSettings.from(FaroConf.empty()))) {
        MasterClient master =
            new MasterClient(
                pool, List.of(HostPort.parse(cluster.masterEndpoint())), Duration.ofSeconds(30));
        ClusterStatusResponse status =
            master.callBlocking(
                ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
        assertThat(status.getWorkersList()).hasSize(2).allMatch(w -> w.getAlive());
      }
      // A second cluster in the same directory is refused with a one-line reason.
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      java.io.PrintStream originalErr = System.err;
      int refused;
      try {
        System.setErr(new java.io.PrintStream(err, true));
        refused = FaroCli.run("local-cluster", "--work-dir", dir.toString(), "--master-port", "0");
      } finally {
        System.setErr(originalErr);
      }
      assertThat(refused).isEqualTo(1);
      assertThat(err.toString())
          .startsWith("faro local-cluster: a local cluster is already running in")
          .doesNotContain("\tat ");

      // `bin/faro local-cluster stop` finds the processes through cluster.json.
      assertThat(FaroCli.run("local-cluster", "stop", "--work-dir", dir.toString())).isZero();
      assertThat(processes).noneMatch(ProcessHandle::isAlive);
    }
  }
}
