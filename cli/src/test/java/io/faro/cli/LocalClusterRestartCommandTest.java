package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `faro local-cluster restart` run as an operator would, against real processes. */
class LocalClusterRestartCommandTest {
  @Test
  void restartsOneMemberOnItsPortsAndUpdatesClusterJson(@TempDir Path dir) throws Exception {
    try (LocalCluster cluster = LocalCluster.start(dir, LocalCluster.Options.workers(1))) {
      LocalCluster.Member worker = cluster.member("worker-0");
      long oldPid = worker.pid();

      int code =
          FaroCli.run(
              "local-cluster",
              "restart",
              "--work-dir",
              dir.toString(),
              "--member",
              "worker-0",
              "--kill");

      assertThat(code).isZero();
      assertThat(worker.process().isAlive()).as("the old process").isFalse();
      String json = Files.readString(dir.resolve(LocalCluster.CLUSTER_FILE));
      List<Long> pids = Json.numbers(json, "pid");
      assertThat(pids).hasSize(2).doesNotContain(oldPid);
      long newPid = pids.get(1);
      assertThat(ProcessHandle.of(newPid).map(ProcessHandle::isAlive)).contains(true);
      String ports = Files.readString(dir.resolve("worker-0").resolve("ports.json"));
      for (String port : List.of("rpcPort", "pushPort", "fetchPort")) {
        assertThat(Json.number(ports, port)).as(port).isEqualTo(Json.number(worker.ports(), port));
      }
      try (ClientPool pool = new ClientPool("test", NetworkSettings.from(FaroConf.empty()))) {
        MasterClient master =
            new MasterClient(
                pool, List.of(HostPort.parse(cluster.masterEndpoint())), Duration.ofSeconds(30));
        ClusterStatusResponse status =
            master.callBlocking(
                ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
        assertThat(status.getWorkersList()).as("the same worker, alive").hasSize(1);
        assertThat(status.getWorkers(0).getAlive()).isTrue();
      }

      assertThat(
              FaroCli.run(
                  "local-cluster", "restart", "--work-dir", dir.toString(), "--member", "worker-9"))
          .isEqualTo(1);
    } finally {
      // The restarted process is not the one the LocalCluster object started.
      LocalCluster.stop(dir);
    }
  }
}
