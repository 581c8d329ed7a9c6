package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.cli.WorkerDirs;
import io.faro.common.json.Json;
import io.faro.examples.CompareJobs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Storage tiers on a real cluster: each of two workers has a small NVMe-labelled directory (48 MB,
 * full below 8 MB) and an HDD-labelled one. New partitions go to NVMe first; a Spark job shuffling
 * several times what the NVMe directories hold fills them, its partitions there split and continue
 * on the HDD ones, and the job's answer equals the built-in shuffle's.
 */
class TierFallbackIT {
  /** About 150 MB through the shuffle (the large job is about 3 GB at scale 1). */
  private static final String SCALE = "0.05";

  private static final long NVME_BYTES = 48L << 20;

  @TempDir Path dir;

  @Test
  void aSmallNvmeDirectoryFillsAndItsPartitionsContinueOnTheHddOne() throws Exception {
    Path conf = dir.resolve("tiers.conf");
    Files.writeString(
        conf,
        String.join(
            "\n",
            "faro.worker.tier.nvme.reserve=8m",
            "faro.worker.tier.hdd.reserve=0",
            "faro.worker.disk.check.interval=200ms",
            // Placement gives a disk no more partitions than its space holds at the estimated
            // partition size; estimate small, so that the NVMe directories take partitions and
            // fill up under them rather than being passed over from the start.
            "faro.master.slots.partition.size.initial=1m",
            "faro.master.slots.partition.size.min=1m",
            ""));
    try (LocalCluster cluster =
        LocalCluster.start(
            dir.resolve("cluster"),
            LocalCluster.Options.workers(2)
                .withConf(conf)
                .withWorkerDirs(WorkerDirs.parse("nvme:48m,hdd")))) {
      String builtin = new SparkJobRunner(dir).builtin("large", SCALE, List.of());
      String faro =
          new SparkJobRunner(dir).run("large", "faro", SCALE, cluster.masterEndpoint(), "f");

      assertThat(Json.string(faro, "shuffle_manager")).isEqualTo(CompareJobs.FARO_SHUFFLE_MANAGER);
      assertThat(Json.string(faro, "checksum"))
          .as("faro: %s%nbuiltin: %s", faro, builtin)
          .isEqualTo(Json.string(builtin, "checksum"));
      // More than both NVMe directories together can hold went through the workers.
      assertThat(Json.number(faro, "shuffle_write_bytes")).isGreaterThan(2 * NVME_BYTES);
      for (LocalCluster.Member worker : cluster.members()) {
        if (!worker.name().startsWith("worker-")) {
          continue;
        }
        String log = Files.readString(worker.log());
        assertThat(log)
            .as("%s's NVMe directory (disk 0) filled up", worker.name())
            .containsPattern("disk 0 \\([^)]*:nvme:[0-9]+, [a-z]+ I/O\\) is full");
        assertThat(log).as("no disk broke").doesNotContain("is broken");
      }
    }
  }
}
