package io.faro.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.json.Json;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class MasterCommandTest {
  @TempDir Path dir;
  private final StringWriter err = new StringWriter();

  private CommandLine command() {
    CommandLine line = new CommandLine(new MasterCommand());
    line.setErr(new PrintWriter(err, true));
    return line;
  }

  @Test
  void badConfigValueExitsWithTheKeyInTheMessage() {
    int exit = command().execute("--set", "faro.master.port=99999");

    assertThat(exit).isEqualTo(MasterCommand.EXIT_BAD_CONFIG);
    assertThat(err.toString()).contains("faro.master.port").contains("[0, 65535]");
  }

  @Test
  void missingConfigFileIsAConfigError() {
    int exit = command().execute("--conf", dir.resolve("absent.conf").toString());

    assertThat(exit).isEqualTo(MasterCommand.EXIT_BAD_CONFIG);
    assertThat(err.toString()).contains("absent.conf");
  }

  @Test
  void helpListsTheOptions() {
    StringWriter out = new StringWriter();
    CommandLine line = command();
    line.setOut(new PrintWriter(out, true));

    assertThat(line.execute("--help")).isZero();
    assertThat(out.toString()).contains("--conf", "--set", "--port-file");
  }

  @Test
  void runsTheMasterAndWritesItsPortsUntilStopped() throws Exception {
    Path conf = dir.resolve("faro-defaults.conf");
    Path secret = dir.resolve("cluster.secret");
    io.faro.common.auth.Secret.writeNew(secret);
    Files.writeString(
        conf,
        String.join(
            "\n",
            "faro.auth.cluster.secret.file " + secret,
            "faro.master.host 127.0.0.1",
            "faro.master.advertised.host 127.0.0.1",
            "faro.master.port 9097",
            "faro.master.ratis.dir " + dir.resolve("ratis"),
            "faro.network.io.threads 2"));
    Path portFile = dir.resolve("run/master.json");
    Files.createDirectories(portFile.getParent());
    AtomicInteger exit = new AtomicInteger(-1);
    Thread runner =
        new Thread(
            () ->
                exit.set(
                    command()
                        .execute(
                            "--conf",
                            conf.toString(),
                            "--set",
                            "faro.master.port=0",
                            "--set",
                            "faro.master.raft.port=0",
                            "--set",
                            "faro.master.http.port=0",
                            "--port-file",
                            portFile.toString())),
            "master-command-test");
    runner.start();
    try {
      Eventually.await("the port file", Duration.ofSeconds(20), () -> Files.exists(portFile));
      String json = Files.readString(portFile);
      assertThat(Json.string(json, "role")).isEqualTo("master");
      assertThat(Json.number(json, "pid")).isEqualTo(ProcessHandle.current().pid());
      int rpcPort = field(json, "rpcPort");
      assertThat(field(json, "raftPort")).isPositive();

      try (ClientPool pool =
          new ClientPool("test-client", NetworkSettings.from(FaroConf.empty()))) {
        ClusterStatusResponse status =
            pool.call(
                    new HostPort("127.0.0.1", rpcPort),
                    ClusterStatusRequest.getDefaultInstance(),
                    ClusterStatusResponse.class)
                .get(10, TimeUnit.SECONDS);
        assertThat(status.getLeaderId()).isEqualTo("m1");
      }
    } finally {
      runner.interrupt();
      runner.join(TimeUnit.SECONDS.toMillis(20));
    }
    assertThat(runner.isAlive()).isFalse();
    assertThat(exit.get()).isZero();
  }

  private static int field(String json, String name) {
    return (int) Json.number(json, name);
  }
}
