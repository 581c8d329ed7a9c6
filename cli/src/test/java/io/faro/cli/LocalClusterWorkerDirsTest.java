package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskTierP;
import io.faro.proto.WorkerStatusP;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code local-cluster --worker-dirs} with real processes: every worker registers each of its
 * directories with its tier and capacity, cluster.json lists them, and a restarted worker has them
 * again.
 */
class LocalClusterWorkerDirsTest {
  private static final long MIB = 1 << 20;

  @Test
  void everyWorkerRegistersEachDirectoryWithItsTierAndKeepsThemOverARestart(@TempDir Path dir)
      throws Exception {
    LocalCluster.Options options =
        LocalCluster.Options.workers(2).withWorkerDirs(WorkerDirs.parse("nvme:64m,hdd"));
    try (LocalCluster cluster = LocalCluster.start(dir, options);
        ClientPool pool = new ClientPool("test", NetworkSettings.from(FaroConf.empty()))) {
      MasterClient master =
          new MasterClient(
              pool, List.of(HostPort.parse(cluster.masterEndpoint())), Duration.ofSeconds(30));
      Path home = cluster.workDir();

      String json = Files.readString(home.resolve(LocalCluster.CLUSTER_FILE));
      for (String worker : List.of("worker-0", "worker-1")) {
        assertThat(json)
            .contains("\"" + home.resolve(worker).resolve("nvme") + "\"")
            .contains("\"" + home.resolve(worker).resolve("hdd") + "\"");
        assertThat(home.resolve(worker).resolve("data")).doesNotExist();
      }
      List<WorkerStatusP> workers = status(master).getWorkersList();
      assertThat(workers).hasSize(2);
      for (WorkerStatusP worker : workers) {
        assertDisks(worker, home);
      }

      assertThat(
              FaroCli.run(
                  "local-cluster",
                  "restart",
                  "--work-dir",
                  home.toString(),
                  "--member",
                  "worker-0"))
          .isZero();

      // The new process says which directories it serves in its port file.
      String ports = Files.readString(home.resolve("worker-0").resolve("ports.json"));
      assertThat(ports)
          .contains("\"" + home.resolve("worker-0").resolve("nvme") + "\"")
          .contains("\"" + home.resolve("worker-0").resolve("hdd") + "\"");
      assertThat(Files.readString(home.resolve(LocalCluster.CLUSTER_FILE)))
          .contains("\"" + home.resolve("worker-0").resolve("hdd") + "\"");
      workers = status(master).getWorkersList();
      assertThat(workers).hasSize(2).allMatch(WorkerStatusP::getAlive);
      for (WorkerStatusP worker : workers) {
        assertDisks(worker, home);
      }
    } finally {
      // The restarted process is not the one the LocalCluster object started.
      LocalCluster.stop(dir);
    }
  }

  private static ClusterStatusResponse status(MasterClient master) {
    return master.callBlocking(
        ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
  }

  /** The disks {@code worker} registered: nvme capped at 64 MiB first, then an uncapped hdd. */
  private static void assertDisks(WorkerStatusP worker, Path home) {
    List<DiskSpecP> disks = worker.getDisksList();
    assertThat(disks).as(worker.getWorkerId()).hasSize(2);
    Path own = Path.of(disks.get(0).getPath()).getParent();
    assertThat(own.getParent()).isEqualTo(home);
    assertThat(own.getFileName().toString()).startsWith("worker-");
    assertThat(disks.get(0).getIndex()).isZero();
    assertThat(disks.get(0).getPath()).isEqualTo(own.resolve("nvme").toString());
    assertThat(disks.get(0).getTier()).isEqualTo(DiskTierP.NVME);
    assertThat(disks.get(0).getCapacityBytes()).isEqualTo(64 * MIB);
    assertThat(disks.get(1).getIndex()).isEqualTo(1);
    assertThat(disks.get(1).getPath()).isEqualTo(own.resolve("hdd").toString());
    assertThat(disks.get(1).getTier()).isEqualTo(DiskTierP.HDD);
    assertThat(disks.get(1).getCapacityBytes()).isGreaterThan(64 * MIB);
  }
}
