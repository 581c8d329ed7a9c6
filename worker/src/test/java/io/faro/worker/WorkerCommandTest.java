package io.faro.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import io.faro.common.testing.Eventually;
import io.faro.worker.testing.FakeMaster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class WorkerCommandTest {
  @TempDir Path tmp;

  @Test
  void runsAWorkerWritesThePortFileAndStops() throws Exception {
    try (FakeMaster master = new FakeMaster()) {
      Path conf = tmp.resolve("worker.conf");
      Files.writeString(
          conf,
          """
          faro.worker.host 127.0.0.1
          faro.worker.bind.host 127.0.0.1
          faro.worker.rpc.port 0
          faro.worker.push.port 0
          faro.worker.fetch.port 0
          faro.worker.http.port 0
          faro.worker.dirs /nonexistent-overridden:hdd
          faro.auth.enabled false
          """);
      Path portFile = tmp.resolve("run/worker.json");
      WorkerCommand command = new WorkerCommand();
      CommandLine commandLine = new CommandLine(command);
      CompletableFuture<Integer> exit =
          CompletableFuture.supplyAsync(
              () ->
                  commandLine.execute(
                      "--conf",
                      conf.toString(),
                      "--set",
                      "faro.master.endpoints=" + master.endpoint(),
                      "--set",
                      "faro.worker.dirs=" + tmp.resolve("disk") + ":ssd",
                      "--port-file",
                      portFile.toString()));

      Eventually.await("the port file", () -> Files.exists(portFile));
      String json = Files.readString(portFile);
      var registration = master.registrations().get(0);
      assertThat(json).contains("\"dirs\": [\"" + tmp.resolve("disk") + "\"]");
      assertThat(Json.string(json, "role")).isEqualTo("worker");
      assertThat(Json.number(json, "pid")).isEqualTo(ProcessHandle.current().pid());
      assertThat(Json.string(json, "workerId")).isEqualTo(registration.getWorkerId());
      assertThat(Json.number(json, "rpcPort")).isEqualTo(registration.getEndpoint().getRpcPort());
      assertThat(Json.number(json, "pushPort")).isEqualTo(registration.getEndpoint().getPushPort());
      assertThat(Json.number(json, "fetchPort"))
          .isEqualTo(registration.getEndpoint().getFetchPort());
      try (var siblings = Files.list(portFile.getParent())) {
        assertThat(siblings).as("no temporary file left").containsExactly(portFile);
      }

      command.stop();
      assertThat(exit.get(10, TimeUnit.SECONDS)).isZero();
    }
  }

  @Test
  void aConfigErrorPrintsTheKeyAndExitsNonZero() {
    StringWriter err = new StringWriter();
    CommandLine commandLine = new CommandLine(new WorkerCommand()).setErr(new PrintWriter(err));
    int exit = commandLine.execute("--set", "faro.worker.dirs=/tmp/x:tape");
    assertThat(exit).isEqualTo(WorkerCommand.EXIT_CONFIG_ERROR);
    assertThat(err.toString()).contains("faro.worker.dirs").contains("tape");
  }

  @Test
  void aWorkerWithoutAUsableDiskExitsNamingTheDiskAndWhy() throws Exception {
    Path aFile = Files.writeString(tmp.resolve("a-file"), "not a directory");
    StringWriter err = new StringWriter();
    CommandLine commandLine = new CommandLine(new WorkerCommand()).setErr(new PrintWriter(err));

    int exit =
        commandLine.execute(
            "--set",
            "faro.auth.enabled=false",
            "--set",
            "faro.master.endpoints=127.0.0.1:1",
            "--set",
            "faro.worker.dirs=" + aFile + ":ssd",
            "--set",
            "faro.worker.rpc.port=0",
            "--set",
            "faro.worker.push.port=0",
            "--set",
            "faro.worker.fetch.port=0",
            "--set",
            "faro.worker.http.port=0");

    assertThat(exit).isEqualTo(WorkerCommand.EXIT_START_FAILED);
    assertThat(err.toString())
        .startsWith("faro worker: cannot start: every disk of this worker is broken")
        .contains(aFile + " is a file, not a directory")
        .contains("faro.worker.dirs");
  }

  @Test
  void helpPrintsTheOptions() {
    StringWriter out = new StringWriter();
    CommandLine commandLine = new CommandLine(new WorkerCommand()).setOut(new PrintWriter(out));
    assertThat(commandLine.execute("--help")).isZero();
    assertThat(out.toString()).contains("--conf", "--set", "--port-file");
  }
}
