package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.json.Json;
import io.faro.examples.CompareJobs;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark SQL job whose shuffle has a million partitions (the {@code wide} job: a few thousand rows
 * spread by hash over all of them, coalesced by adaptive execution into a few reduce tasks), run in
 * a JVM of 512 MB, the driver's heap in local mode, with the built-in shuffle and with Faro on two
 * worker processes: both finish with the same rows. The workers hold a location per partition,
 * nearly all idle, and are allowed 600,000 each (faro.worker.max.partitions), as a 1 GB worker
 * allowed only 262,144 before idle locations made an unwritten one a few dozen bytes (by default it
 * now holds 2,097,152, of which 262,144 written).
 */
class WideShuffleIT {
  private static final String HEAP = "512m";

  @TempDir Path dir;

  @Test
  void aShuffleOfAMillionPartitionsRunsWithTheDriverIn512Mb() throws Exception {
    Path conf = dir.resolve("wide.conf");
    Files.writeString(conf, "faro.worker.max.partitions = 600000\n");
    try (LocalCluster cluster =
        LocalCluster.start(
            dir.resolve("cluster"), LocalCluster.Options.workers(2).withConf(conf))) {
      SparkJobRunner runner = new SparkJobRunner(dir).withHeap(HEAP);
      String builtin = runner.run("wide", "builtin", "1", cluster.masterEndpoint(), "builtin");
      String faro = runner.run("wide", "faro", "1", cluster.masterEndpoint(), "faro");

      assertThat(Json.string(faro, "shuffle_manager")).isEqualTo(CompareJobs.FARO_SHUFFLE_MANAGER);
      assertThat(Json.number(builtin, "records")).isEqualTo(1000);
      assertThat(Json.number(faro, "stage_retries")).as(faro).isZero();
      assertThat(Json.number(faro, "failed_tasks")).as(faro).isZero();
      assertThat(Json.string(faro, "checksum"))
          .as("faro: %s%nbuiltin: %s", faro, builtin)
          .isEqualTo(Json.string(builtin, "checksum"));
    }
  }
}
