package io.faro.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.LocalCluster;
import io.faro.common.auth.Secret;
import io.faro.common.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark job through a Faro cluster that authenticates everyone (faro.auth.enabled on every
 * member): executors in their own JVMs on a Spark standalone cluster learn their app's secret from
 * the shuffle handle, prove it to the workers and to the driver, and the job's checksum equals the
 * built-in shuffle's, with replication (worker to worker, with the cluster secret) on. Nothing is
 * set on the Spark side for it.
 */
class AuthIT {
  private static final String SCALE = "0.05";

  @TempDir Path dir;

  @Test
  void aSparkJobOnSeparateExecutorsRunsThroughAnAuthenticatingCluster() throws Exception {
    SparkJobRunner runner = new SparkJobRunner(dir);
    String expected =
        Json.string(runner.run("large", "builtin", SCALE, "", "builtin-large"), "checksum");

    Path clusterSecret = dir.resolve("cluster.secret");
    Path adminSecret = dir.resolve("admin.secret");
    Secret.writeNew(clusterSecret);
    Secret.writeNew(adminSecret);
    Path conf =
        Files.writeString(
            dir.resolve("members.conf"),
            String.join(
                "\n",
                "faro.auth.enabled=true",
                "faro.auth.cluster.secret.file=" + clusterSecret,
                "faro.auth.admin.secret.file=" + adminSecret,
                ""));
    try (LocalCluster cluster =
            LocalCluster.start(
                dir.resolve("faro"), LocalCluster.Options.workers(2).withConf(conf));
        SparkStandalone spark = SparkStandalone.start(dir.resolve("spark"), 2, 1)) {
      List<String> sparkConf = new ArrayList<>(spark.executorConf());
      sparkConf.add("spark.faro.client.push.replicate.enabled=true");
      String result =
          runner
              .start("large", "faro", SCALE, cluster.masterEndpoint(), "auth-large", sparkConf)
              .awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "shuffle_write_bytes")).isPositive();
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      // A refused connection fails the task that used it: none failed, and no member logged a
      // refusal or a failed handshake.
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
      for (LocalCluster.Member member : cluster.members()) {
        assertThat(Files.readString(member.log()))
            .as("log of %s", member.name())
            .doesNotContain("needs a connection authenticated")
            .doesNotContain("wrong proof")
            .doesNotContain("holds no")
            .doesNotContain("does not authenticate");
      }
    }
  }
}
