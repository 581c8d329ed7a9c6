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
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `faro local-cluster --masters 3` with real processes, observed and driven with `faro admin`: one
 * leader, a leader moved on request, and a leader killed with SIGKILL replaced by an election while
 * the worker goes on heartbeating to whoever leads.
 */
class LocalHaClusterTest {
  @Test
  void threeMasterProcessesElectMoveAndSurviveALeaderKill(@TempDir Path dir) throws Exception {
    try (LocalCluster cluster =
            LocalCluster.start(dir, LocalCluster.Options.workers(1).withMasters(3));
        ClientPool pool = new ClientPool("test", NetworkSettings.from(FaroConf.empty()))) {
      String clusterJson = Files.readString(dir.resolve(LocalCluster.CLUSTER_FILE));
      assertThat(Json.strings(clusterJson, "masterId")).containsExactly("m1", "m2", "m3");
      assertThat(cluster.masterEndpoints()).hasSize(3);
      assertThat(clusterJson)
          .contains("\"spark.faro.master.endpoints\": \"" + cluster.masterEndpoint() + "\"");
      String endpoints = cluster.masterEndpoint();

      Admin first = awaitOneLeader(endpoints, 3);
      assertThat(first.json()).contains("\"leaders\": 1");
      assertThat(Json.numbers(first.json(), "pid"))
          .containsExactlyInAnyOrderElementsOf(
              cluster.members().stream()
                  .filter(m -> m.role().equals("master"))
                  .map(LocalCluster.Member::pid)
                  .toList());
      assertThat(Json.strings(first.json(), "role"))
          .containsExactlyInAnyOrder("leader", "follower", "follower");
      String leader = first.leaderId();

      // Leadership moves on request, e.g. before restarting the leader.
      String target = leader.equals("m1") ? "m2" : "m1";
      // State changes prove the admin secret local-cluster made (admin.conf beside cluster.json).
      String adminConf = cluster.adminConf().orElseThrow().toString();
      Admin transfer =
          admin(
              "admin",
              "transfer-leader",
              "--to",
              target,
              "--endpoints",
              endpoints,
              "--conf",
              adminConf);
      assertThat(transfer.exitCode()).as(transfer.output()).isZero();
      assertThat(awaitOneLeader(endpoints, 3).leaderId()).isEqualTo(target);

      // An operator takes the worker out of placement and puts it back, by its id from
      // cluster.json.
      String worker = Json.string(clusterJson, "workerId");
      Admin exclude =
          admin(
              "admin",
              "exclude-worker",
              "--id",
              worker,
              "--reason",
              "test",
              "--endpoints",
              endpoints,
              "--conf",
              adminConf);
      assertThat(exclude.exitCode()).as(exclude.output()).isZero();
      assertThat(exclude.output()).contains("worker " + worker + " is excluded");
      Admin include =
          admin(
              "admin",
              "include-worker",
              "--id",
              worker,
              "--endpoints",
              endpoints,
              "--conf",
              adminConf);
      assertThat(include.exitCode()).as(include.output()).isZero();
      Admin unknown =
          admin(
              "admin",
              "decommission-worker",
              "--id",
              "no-such-worker",
              "--endpoints",
              endpoints,
              "--conf",
              adminConf);
      assertThat(unknown.exitCode()).isEqualTo(1);
      assertThat(unknown.output()).contains("no worker no-such-worker is registered");

      // SIGKILL the leader's process: the two others elect a new one; the worker follows it.
      LocalCluster.Member killed =
          cluster.members().stream()
              .filter(m -> m.name().equals("master-" + target.substring(1)))
              .findFirst()
              .orElseThrow();
      killed.process().destroyForcibly();
      assertThat(killed.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
      Admin after = awaitOneLeader(endpoints, 2);
      assertThat(after.exitCode()).as("one master does not answer").isEqualTo(3);
      assertThat(after.leaderId()).isNotEqualTo(target);
      assertThat(Json.strings(after.json(), "role")).contains("unreachable");

      MasterClient master =
          new MasterClient(
              pool,
              cluster.masterEndpoints().stream().map(HostPort::parse).toList(),
              Duration.ofSeconds(30));
      ClusterStatusResponse status =
          master.callBlocking(
              ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
      assertThat(status.getLeaderId()).isEqualTo(after.leaderId());
      assertThat(status.getWorkersList())
          .singleElement()
          .satisfies(w -> assertThat(w.getAlive()).isTrue());
    }
  }

  private record Admin(int exitCode, String output) {
    String json() {
      return output;
    }

    String leaderId() {
      List<String> roles = Json.strings(output, "role");
      List<String> ids = Json.strings(output, "id");
      // Unreachable masters have a role but no id: pair them through the answered ones only.
      List<String> answered = roles.stream().filter(r -> !r.equals("unreachable")).toList();
      return ids.get(answered.indexOf("leader"));
    }
  }

  /**
   * Runs `faro admin masters --json` until exactly one of {@code answering} answering masters
   * leads.
   */
  private static Admin awaitOneLeader(String endpoints, int answering) {
    // The masters are other processes: their status, polled, is the only signal.
    return Eventually.awaitEvery(
        Duration.ofMillis(200),
        "a single leader among " + answering + " answering masters",
        Duration.ofSeconds(30),
        () -> admin("admin", "masters", "--json", "--endpoints", endpoints, "--timeout", "3s"),
        last -> {
          List<String> roles = Json.strings(last.output(), "role");
          return roles.stream().filter("leader"::equals).count() == 1
              && roles.stream().filter(r -> !r.equals("unreachable")).count() == answering
              && Json.strings(last.output(), "leader_id").stream().distinct().count() == 1;
        });
  }

  private static Admin admin(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = FaroCli.run(new PrintWriter(out), new PrintWriter(err), args);
    return new Admin(code, out + err.toString());
  }
}
