package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import io.faro.common.network.FreePorts;
import io.faro.common.testing.Eventually;
import io.faro.examples.CompareJobs;
import io.faro.systemtests.SparkJobRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/ansible as an operator runs it, on this machine: site.yml installs the distribution
 * tarball for three masters and three workers (each "host" an inventory entry with its own
 * directories and ports, managed as plain processes with pid files: no systemd runs here) and
 * starts them; a Spark job (its own JVM) starts; rolling-upgrade.yml then moves every member to a
 * new release, one at a time (followers, the leader after a leader transfer, then each worker with
 * a graceful stop), while the job runs. The job must give the built-in shuffle's checksum with no
 * stage re-run and no failed task, and every process must end up running the new release.
 *
 * <p>The "new release" is the same tarball installed under another version: the test is of the roll
 * (new release directory, the switch of {@code current}, stop, start, readiness), not of a change
 * of code.
 */
class RollingUpgradeIT {
  private static final String SCALE = "0.02";
  private static final Duration PLAYBOOK_TIMEOUT = Duration.ofMinutes(10);
  private static final List<String> MASTERS = List.of("m1", "m2", "m3");
  private static final List<String> WORKERS = List.of("w1", "w2", "w3");

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void aSparkJobRunsThroughARollingUpgradeOfEveryMasterAndWorker() throws Exception {
    Path deploy = Path.of(System.getProperty("faro.deploy.dir"));
    Path tarball = Path.of(System.getProperty("faro.dist.tarball"));
    assertThat(tarball).exists();
    String version = tarball.getFileName().toString().replaceAll("^faro-|\\.tar\\.gz$", "");
    String next = version + "-next";
    Ansible ansible =
        Ansible.in(Path.of(System.getProperty("faro.deploy.venv")), deploy.resolve("ansible"));
    Path inventory = writeInventory(ansible.python(), tarball, version);
    Path log = dir.resolve("ansible.log");
    assertThat(ansible.syntaxCheck("site.yml", inventory, log)).as("see %s", log).isZero();
    assertThat(ansible.syntaxCheck("rolling-upgrade.yml", inventory, log))
        .as("see %s", log)
        .isZero();

    try {
      assertThat(ansible.playbook("site.yml", inventory, log, PLAYBOOK_TIMEOUT))
          .as("site.yml; see %s", log)
          .isZero();
      String masters = masterEndpoints();
      assertThat(faro("m1", "admin", "masters", "--endpoints", masters).exitCode())
          .as("one leader, every master answers")
          .isZero();

      SparkJobRunner runner = new SparkJobRunner(dir);
      String expected = Json.string(runner.builtin("large", SCALE, List.of()), "checksum");
      SparkJobRunner.Started job =
          runner.start(
              "large",
              "faro",
              SCALE,
              masters,
              "upgraded",
              List.of(
                  // Long enough to outlast the roll of six members (about 200 s here, some 120
                  // Ansible tasks each): maps push for about four minutes, reducers read for half
                  // a minute.
                  CompareJobs.MAP_PAUSE_KEY + "=600",
                  CompareJobs.READ_PAUSE_KEY + "=100",
                  "spark.faro.client.push.batch.size=16k"));
      Eventually.awaitEvery(
          Duration.ofMillis(500),
          "the job's shuffle placed on the workers",
          Duration.ofSeconds(90),
          () -> faro("m1", "admin", "workers", "--json", "--endpoints", masters).output(),
          out -> !job.process().isAlive() || slots(out));
      assertThat(job.process().isAlive()).as("the job runs when the roll starts").isTrue();
      long rollStartMs = System.currentTimeMillis();

      int rolled =
          ansible.playbook(
              "rolling-upgrade.yml", inventory, log, PLAYBOOK_TIMEOUT, "faro_version=" + next);

      System.out.printf(
          "rolling-upgrade.yml moved 3 masters and 3 workers to %s in %d s%n",
          next, (System.currentTimeMillis() - rollStartMs) / 1000);
      assertThat(rolled).as("rolling-upgrade.yml; see %s", log).isZero();
      assertThat(job.process().isAlive()).as("the job still runs when the roll ends").isTrue();
      String result = job.awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
      // Every process now runs the new release, started during the roll.
      for (String host : concat(MASTERS, WORKERS)) {
        long pid = pid(host);
        String cmdline =
            Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).replace('\0', ' ');
        assertThat(cmdline).as("%s's command line", host).contains("/releases/" + next + "/lib");
      }
      String workers = faro("m1", "admin", "workers", "--json", "--endpoints", masters).output();
      assertThat(Json.strings(workers, "state")).containsExactly("serving", "serving", "serving");
      assertThat(Json.numbers(workers, "started_at_ms")).allMatch(t -> t > rollStartMs);
      assertThat(Files.readString(log)).contains("Hand leadership to another master");
      restartOneWorker(masters);
    } finally {
      ansible.playbook("site.yml", inventory, log, PLAYBOOK_TIMEOUT, "faro_state=stopped");
      killLeftovers();
    }
  }

  /**
   * A graceful restart of w1 as the role does one in process mode (faro-service stop, then start),
   * timed from the stop until the masters list the new process as serving: SystemdClusterIT times
   * {@code systemctl restart} the same way. (A worker killed in this mode stays down: nothing
   * restarts it.)
   */
  private void restartOneWorker(String masters) throws Exception {
    Path service = home("w1").resolve("opt/bin/faro-service");
    Path env = home("w1").resolve("etc/faro-service.env");
    String id = "127.0.0.1:" + hosts.get("w1").get("faro_worker_rpc_port");
    long start = System.currentTimeMillis();
    for (String action : List.of("stop", "start")) {
      Processes.Result r =
          Processes.run(
              List.of(service.toString(), action, env.toString()), dir, Duration.ofMinutes(3));
      assertThat(r.exitCode()).as("faro-service %s: %s", action, r.output()).isZero();
    }
    FaroRun serving =
        faro(
            "m1",
            "admin",
            "await-worker",
            "--endpoints",
            masters,
            "--conf",
            home("m1").resolve("etc/faro-defaults.conf").toString(),
            "--id",
            id,
            "--state",
            "serving",
            "--started-after",
            Long.toString(start),
            "--wait",
            "120s");
    assertThat(serving.exitCode()).as(serving.output()).isZero();
    System.out.printf(
        "process mode: faro-service stop and start take a worker out of service for %d ms%n",
        System.currentTimeMillis() - start);
  }

  private static boolean slots(String workersJson) {
    return Json.numbers(workersJson, "allocated_slots").stream().anyMatch(n -> n > 0);
  }

  // ------------------------------------------------------------------ the inventory

  private final Map<String, Map<String, Object>> hosts = new LinkedHashMap<>();

  private Path home(String host) {
    return dir.resolve(host);
  }

  /** Three masters and three workers on 127.0.0.1, each with its own directories and ports. */
  private Path writeInventory(Path python, Path tarball, String version) throws IOException {
    for (String m : MASTERS) {
      Map<String, Object> vars = paths(m);
      vars.put("faro_master_id", m);
      vars.put("faro_master_ratis_dir", home(m).resolve("ratis").toString());
      vars.put("faro_master_port", freePort());
      vars.put("faro_master_raft_port", freePort());
      vars.put("faro_master_http_port", freePort());
      hosts.put(m, vars);
    }
    for (String w : WORKERS) {
      Map<String, Object> vars = paths(w);
      vars.put("faro_worker_dirs", List.of(home(w).resolve("data") + ":ssd"));
      vars.put("faro_worker_rpc_port", freePort());
      vars.put("faro_worker_push_port", freePort());
      vars.put("faro_worker_fetch_port", freePort());
      vars.put("faro_worker_http_port", freePort());
      hosts.put(w, vars);
    }
    Map<String, Object> common = new LinkedHashMap<>();
    common.put("ansible_connection", "local");
    common.put("ansible_python_interpreter", python.toString());
    common.put("faro_service_manager", "process");
    common.put("faro_manage_user", false);
    common.put("faro_host", "127.0.0.1");
    common.put("faro_java_home", System.getProperty("java.home"));
    common.put("faro_java_opts", "-Xms64m -Xmx512m -XX:MaxDirectMemorySize=1g");
    common.put("faro_version", version);
    common.put("faro_tarball", tarball.toString());
    common.put("faro_ready_timeout_seconds", 120);
    common.put("faro_settings", Map.of("faro.worker.chunk.size", "256k"));
    Map<String, Object> masters = new LinkedHashMap<>();
    MASTERS.forEach(m -> masters.put(m, hosts.get(m)));
    Map<String, Object> workers = new LinkedHashMap<>();
    WORKERS.forEach(w -> workers.put(w, hosts.get(w)));
    Map<String, Object> all = new LinkedHashMap<>();
    all.put("vars", common);
    all.put(
        "children",
        Map.of("faro_masters", Map.of("hosts", masters), "faro_workers", Map.of("hosts", workers)));
    // JSON is YAML: Ansible reads it as an inventory.
    Path file = dir.resolve("inventory.json");
    Files.writeString(file, Json.write(Map.of("all", all)), StandardCharsets.UTF_8);
    return file;
  }

  private Map<String, Object> paths(String host) {
    Map<String, Object> vars = new LinkedHashMap<>();
    vars.put("faro_install_root", home(host).resolve("opt").toString());
    vars.put("faro_conf_dir", home(host).resolve("etc").toString());
    vars.put("faro_log_dir", home(host).resolve("log").toString());
    vars.put("faro_run_dir", home(host).resolve("run").toString());
    return vars;
  }

  /**
   * A port free now on every address (the deployed processes listen on all), outside the kernel's
   * ephemeral range and not handed out before: the processes start minutes later, and a port from
   * that range can meanwhile become the local port of some outgoing connection (seen in CI: "port
   * 46227 is in use").
   */
  private static int freePort() throws IOException {
    return FreePorts.pick("0.0.0.0", 1)[0];
  }

  private String masterEndpoints() {
    List<String> endpoints = new ArrayList<>();
    for (String m : MASTERS) {
      endpoints.add("127.0.0.1:" + hosts.get(m).get("faro_master_port"));
    }
    return String.join(",", endpoints);
  }

  // ------------------------------------------------------------------ processes

  private long pid(String host) throws IOException {
    String role = host.startsWith("m") ? "master" : "worker";
    return Long.parseLong(
        Files.readString(home(host).resolve("run").resolve("faro-" + role + ".pid")).trim());
  }

  /** Processes the stop left running (it failed, or the roll stopped half-way): SIGKILL. */
  private void killLeftovers() {
    for (String host : concat(MASTERS, WORKERS)) {
      try {
        ProcessHandle.of(pid(host)).ifPresent(ProcessHandle::destroyForcibly);
      } catch (IOException | NumberFormatException e) {
        // no pid file: not running
      }
    }
  }

  /** {@code bin/faro ARGS} of the release installed on {@code host}. */
  private FaroRun faro(String host, String... args) {
    List<String> command = new ArrayList<>();
    command.add(home(host).resolve("opt/current/bin/faro").toString());
    command.addAll(List.of(args));
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
      Process process = builder.start();
      byte[] out = process.getInputStream().readAllBytes();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not end");
      }
      return new FaroRun(process.exitValue(), new String(out, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private record FaroRun(int exitCode, String output) {}

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }
}
