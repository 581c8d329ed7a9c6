package io.faro.systemtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.cli.LocalCluster;
import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.testing.TestCertificates;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark job through a Faro cluster that authenticates everyone (faro.auth.enabled on every
 * member) and encrypts every connection (faro.tls.enabled everywhere, the Spark application
 * included): executors in their own JVMs on a Spark standalone cluster learn their app's secret
 * from the shuffle handle, prove it to the workers and to the driver over TLS, and the job's
 * checksum equals the built-in shuffle's, with replication (worker to worker, with the cluster
 * secret) on. Authentication needs nothing on the Spark side; TLS needs the certificate settings.
 */
class AuthIT {
  private static final String SCALE = "0.05";

  @TempDir Path dir;

  @Test
  void aSparkJobOnSeparateExecutorsRunsThroughAnAuthenticatingEncryptingCluster() throws Exception {
    SparkJobRunner runner = new SparkJobRunner(dir);
    String expected = Json.string(runner.builtin("large", SCALE, List.of()), "checksum");

    TestCertificates.Authority authority =
        TestCertificates.authority(dir.resolve("certs"), "faro-ca");
    TestCertificates.Issued memberCert = authority.issue("member");
    TestCertificates.Issued application = authority.issue("application");
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
                "faro.tls.enabled=true",
                "faro.tls.cert.chain.file=" + memberCert.chain(),
                "faro.tls.key.file=" + memberCert.key(),
                "faro.tls.trust.file=" + memberCert.trust(),
                ""));
    try (LocalCluster cluster =
            LocalCluster.start(
                dir.resolve("faro"), LocalCluster.Options.workers(2).withConf(conf));
        SparkStandalone spark = SparkStandalone.start(dir.resolve("spark"), 2, 1)) {
      List<String> sparkConf = new ArrayList<>(spark.executorConf());
      sparkConf.add("spark.faro.client.push.replicate.enabled=true");
      application.conf().forEach((k, v) -> sparkConf.add("spark." + k + "=" + v));
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
            .doesNotContain("does not authenticate")
            .doesNotContain("takes TLS connections only")
            .doesNotContain("TLS handshake");
      }
      // The cluster did encrypt: a client without TLS is refused, and told why.
      try (ClientPool plain = new ClientPool("plain", NetworkSettings.from(FaroConf.empty()))) {
        assertThatThrownBy(
                () ->
                    Futures.await(
                        plain.call(
                            HostPort.parse(cluster.masterEndpoint()),
                            MasterStatusRequest.getDefaultInstance(),
                            MasterStatusResponse.class),
                        Duration.ofSeconds(10),
                        "status"))
            .hasMessageContaining("takes TLS connections only");
      }
    }
  }
}
