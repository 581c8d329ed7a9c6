package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.common.id.AppId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code faro admin apps | shuffles | disks} against a local cluster of real processes, reading
 * their HTTP API: two apps with shuffles placed and data pushed, listed from the master with who
 * runs them and what they hold, and seen on a worker's disks; a port that is not an API is named in
 * the error. {@code faro admin admission set | show}: rules from a file, a typo named by line.
 */
class AdminApiCommandsTest {
  private record Admin(int exitCode, String out, String err) {}

  private static Admin admin(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = FaroCli.run(new PrintWriter(out), new PrintWriter(err), args);
    return new Admin(code, out.toString(), err.toString());
  }

  @Test
  void appsShufflesAndDisksComeFromTheHttpApi(@TempDir Path dir) throws Exception {
    TextShuffle text = new TextShuffle(2, 4, 500);
    try (LocalCluster cluster =
        LocalCluster.start(dir.resolve("cluster"), LocalCluster.Options.workers(1))) {
      String master = "127.0.0.1:" + Json.number(cluster.member("master").ports(), "httpPort");
      String worker = "127.0.0.1:" + Json.number(cluster.member("worker-0").ports(), "httpPort");
      ClientSettings settings = TextShuffle.settings(cluster);
      // Two applications, each its own driver's pool (each proves its own app to the cluster).
      try (ClientPool pool = new ClientPool("test", settings.network());
          ClientPool secondPool = new ClientPool("test-two", settings.network());
          LifecycleManager first =
              new LifecycleManager(
                  new AppId("app-one"),
                  new io.faro.common.admission.AppProfile("ann", "etl", "daily-report"),
                  settings,
                  pool,
                  "127.0.0.1");
          LifecycleManager second =
              new LifecycleManager(new AppId("app-two"), settings, secondPool, "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        for (int s = 0; s < 2; s++) {
          text.push(client, first.endpoint(), new EngineShuffleId(first.app(), s), 0);
        }
        text.push(
            new ShuffleClient(secondPool, settings),
            second.endpoint(),
            new EngineShuffleId(second.app(), 0),
            0);

        // The listings name applications: with authentication on (local-cluster's default) they
        // need the admin token, which --conf derives from the admin secret; /metrics stays open.
        String adminConf = cluster.adminConf().orElseThrow().toString();
        Admin withoutToken = admin("admin", "apps", "--http", master);
        assertThat(withoutToken.exitCode()).isNotZero();
        assertThat(withoutToken.err()).contains("answered 401").contains("admin token");
        for (String page : List.of("/api/v1/shuffles", "/api/v1/quotas", "/metrics")) {
          java.net.http.HttpResponse<String> plain =
              java.net.http.HttpClient.newHttpClient()
                  .send(
                      java.net.http.HttpRequest.newBuilder(
                              java.net.URI.create("http://" + master + page))
                          .build(),
                      java.net.http.HttpResponse.BodyHandlers.ofString());
          assertThat(plain.statusCode()).as(page).isEqualTo(page.equals("/metrics") ? 200 : 401);
        }
        java.net.http.HttpResponse<String> workerShuffles =
            java.net.http.HttpClient.newHttpClient()
                .send(
                    java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://" + worker + "/api/v1/shuffles"))
                        .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(workerShuffles.statusCode()).isEqualTo(401);
        Admin token = admin("admin", "http-token", "--conf", adminConf);
        assertThat(token.exitCode()).as(token.err()).isZero();
        java.net.http.HttpResponse<String> withToken =
            java.net.http.HttpClient.newHttpClient()
                .send(
                    java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://" + worker + "/api/v1/shuffles"))
                        .header("Authorization", "Bearer " + token.out().strip())
                        .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(withToken.statusCode()).isEqualTo(200);
        assertThat(withToken.body()).contains("app-one");

        Admin apps = admin("admin", "apps", "--http", master, "--conf", adminConf);
        assertThat(apps.exitCode()).as(apps.err()).isZero();
        assertThat(apps.out().lines().toList())
            .first()
            .asString()
            .startsWith("ID")
            .contains("SHUFFLES");
        assertThat(apps.out())
            .containsPattern("app-one +ann +etl +daily-report +2 +8 ")
            .containsPattern("app-two +1 +4 ");
        Admin appsJson = admin("admin", "apps", "--http", master, "--json", "--conf", adminConf);
        assertThat(Json.strings(appsJson.out(), "user")).containsExactly("ann", "");
        assertThat(Json.numbers(appsJson.out(), "partitions")).containsExactly(8L, 4L);

        Admin shuffles =
            admin(
                "admin",
                "shuffles",
                "--http",
                master,
                "--app",
                "app-one",
                "--json",
                "--conf",
                adminConf);
        assertThat(shuffles.exitCode()).as(shuffles.err()).isZero();
        assertThat(Json.strings(shuffles.out(), "id")).containsExactly("app-one/0", "app-one/1");
        assertThat(Json.numbers(shuffles.out(), "partitions")).containsExactly(4L, 4L);

        Admin disks = admin("admin", "disks", "--http", worker);
        assertThat(disks.exitCode()).as(disks.err()).isZero();
        assertThat(disks.out()).contains("healthy").contains("worker-0");

        // The admission rules, set from a file and shown; a new app they refuse is told why.
        String endpoints = cluster.masterEndpoint();
        Path rules = dir.resolve("rules.conf");
        java.nio.file.Files.writeString(
            rules, "deny user=guest  # not on Faro\nlimit user=ann shuffles=5\n");
        Admin set =
            admin(
                "admin",
                "admission",
                "set",
                "--file",
                rules.toString(),
                "--reason",
                "pilot",
                "--endpoints",
                endpoints,
                "--conf",
                adminConf);
        assertThat(set.exitCode()).as(set.err()).isZero();
        assertThat(set.out())
            .contains("2 rules and limits, the first matching rule decides; from admin: pilot");
        Admin show = admin("admin", "admission", "show", "--endpoints", endpoints);
        assertThat(show.out()).contains("deny user=guest\nlimit user=ann shuffles=5\n");
        Admin quotas = admin("admin", "quotas", "--http", master, "--conf", adminConf);
        assertThat(quotas.exitCode()).as(quotas.err()).isZero();
        // ann holds two shuffles of the five her limit allows.
        assertThat(quotas.out()).containsPattern("limit user=ann shuffles=5 +ann +- +2 +5 +8 ");
        Throwable refused =
            org.assertj.core.api.Assertions.catchThrowable(
                () ->
                    new LifecycleManager(
                            new AppId("app-guest"),
                            new io.faro.common.admission.AppProfile("guest", "", "x"),
                            settings,
                            pool,
                            "127.0.0.1")
                        .close());
        assertThat(refused)
            .hasMessageContaining("admission rule 1 'deny user=guest' (admin: pilot) refuses it");
        java.nio.file.Files.writeString(rules, "deny user=guest\nallow user=ann\n");
        Admin typo =
            admin(
                "admin",
                "admission",
                "set",
                "--file",
                rules.toString(),
                "--endpoints",
                endpoints,
                "--conf",
                adminConf);
        assertThat(typo.exitCode()).isEqualTo(1);
        assertThat(typo.err())
            .contains("line 2")
            .contains("starts with admit or deny, not 'allow'");

        Admin wrong = admin("admin", "apps", "--http", worker);
        assertThat(wrong.exitCode()).isNotZero();
        assertThat(wrong.err()).contains("answered 404").contains("no page /api/v1/apps");
      }
    }
  }
}
