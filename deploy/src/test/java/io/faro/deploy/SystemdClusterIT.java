package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import io.faro.common.testing.Eventually;
import io.faro.examples.CompareJobs;
import io.faro.systemtests.SparkJobRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/ansible's systemd mode for real: one container per master and worker with systemd as PID 1
 * (Debian, from deploy/src/test/containers/systemd-host.Containerfile), each an emulated host on
 * its own 127.0.0.x of the host's network, reached by Ansible through the podman connection plugin
 * of PyPI's ansible package. site.yml installs the distribution and starts the masters and workers
 * (three of each unless set) as units; systemd-analyze verifies the units and systemd shows the
 * limits, restart policy and stop timeout they set. A Spark job (its own JVM, on the host) runs
 * while rolling-upgrade.yml moves every member to a new release with systemctl: the answer is the
 * built-in shuffle's, with no stage re-run and no failed task, every worker's stop was graceful
 * (exit 0, nothing killed), and every unit's process runs the new release. Then systemd restarts a
 * worker killed with SIGKILL (Restart=on-failure), and the test measures how long a worker is out
 * of service for that and for a {@code systemctl restart}.
 *
 * <p>As in RollingUpgradeIT, the new release is this build's tarball under another version.
 */
class SystemdClusterIT {
  private static final String HOST_IMAGE = "localhost/faro-systemd-host:test";
  private static final String SCALE = "0.02";
  private static final Duration PLAYBOOK_TIMEOUT = Duration.ofMinutes(10);
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(3);

  /**
   * How many emulated hosts of each kind: {@code -Dfaro.systemd.masters} and {@code
   * -Dfaro.systemd.workers}, three of each unless set.
   */
  private static final Map<String, String> MASTERS =
      hosts("m", "127.0.0.1", Integer.getInteger("faro.systemd.masters", 3));

  private static final Map<String, String> WORKERS =
      hosts("w", "127.0.0.2", Integer.getInteger("faro.systemd.workers", 3));
  private static final String ENDPOINTS =
      String.join(
          ",", new java.util.TreeMap<>(MASTERS).values().stream().map(a -> a + ":9097").toList());
  private static final String CONF = "/etc/faro/faro-defaults.conf";

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private Podman podman;
  private Path log;

  @Test
  void ansibleInstallsAndRollsTheUnitsAndSystemdRestartsAKilledWorker() throws Exception {
    podman = Podman.forTests();
    log = dir.resolve("podman.log");
    podman.ensureBaseImage(log);
    podman.build(
        HOST_IMAGE,
        "deploy/src/test/containers/systemd-host.Containerfile",
        log,
        "BASE_IMAGE=" + Podman.BASE_IMAGE);
    Path deploy = Path.of(System.getProperty("faro.deploy.dir"));
    Path tarball = Path.of(System.getProperty("faro.dist.tarball"));
    String version = tarball.getFileName().toString().replaceAll("^faro-|\\.tar\\.gz$", "");
    String next = version + "-next";
    Ansible ansible =
        // A venv of its own: the other tests time their rolls with ansible-core alone.
        Ansible.withCollections(
                Path.of(System.getProperty("faro.deploy.venv") + "-collections"),
                deploy.resolve("ansible"))
            .withEnvironment(podman.environment());
    Path inventory = writeInventory(tarball, version);
    Path ansibleLog = dir.resolve("ansible.log");
    List<String> hosts = hosts();
    try {
      for (String host : hosts) {
        podman.output(
            dir,
            COMMAND_TIMEOUT,
            "run",
            "-d",
            "--name",
            container(host),
            "--network",
            "host",
            "--systemd=always",
            // Longer than a worker's stop (the unit's TimeoutStopSec): systemd stops the units.
            "--stop-timeout",
            "180",
            HOST_IMAGE);
      }
      for (String host : hosts) {
        Eventually.awaitEvery(
            Duration.ofMillis(500),
            host + "'s systemd to finish booting",
            Duration.ofMinutes(1),
            () -> exec(host, "systemctl", "is-system-running").output().trim(),
            state -> state.equals("running") || state.equals("degraded"));
      }

      assertThat(ansible.playbook("site.yml", inventory, ansibleLog, PLAYBOOK_TIMEOUT))
          .as("site.yml; see %s", ansibleLog)
          .isZero();
      checkUnits();

      SparkJobRunner runner = new SparkJobRunner(dir);
      String expected = Json.string(runner.builtin("large", SCALE, List.of()), "checksum");
      SparkJobRunner.Started job =
          runner.start(
              "large",
              "faro",
              SCALE,
              ENDPOINTS,
              "rolled",
              List.of(
                  // Long enough to outlast the roll of six members.
                  CompareJobs.MAP_PAUSE_KEY + "=300",
                  CompareJobs.READ_PAUSE_KEY + "=100",
                  "spark.faro.client.push.batch.size=16k"));
      Eventually.awaitEvery(
          Duration.ofMillis(500),
          "the job's shuffle placed on the workers",
          Duration.ofSeconds(90),
          () -> admin("workers", "--json"),
          out ->
              !job.process().isAlive()
                  || Json.numbers(out, "allocated_slots").stream().anyMatch(n -> n > 0));
      assertThat(job.process().isAlive()).as("the job runs when the roll starts").isTrue();
      long rollStart = System.currentTimeMillis();
      int rolled =
          ansible.playbook(
              "rolling-upgrade.yml",
              inventory,
              ansibleLog,
              PLAYBOOK_TIMEOUT,
              "faro_version=" + next);
      System.out.printf(
          "rolling-upgrade.yml moved %d masters and %d workers (systemd units) to %s in %d s%n",
          MASTERS.size(), WORKERS.size(), next, (System.currentTimeMillis() - rollStart) / 1000);
      assertThat(rolled).as("rolling-upgrade.yml; see %s", ansibleLog).isZero();
      String result = job.awaitResult();
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
      for (String host : hosts) {
        String unit = unit(host);
        String pid = exec(host, "systemctl", "show", unit, "-p", "MainPID", "--value").output();
        String cmdline = exec(host, "cat", "/proc/" + pid.trim() + "/cmdline").output();
        assertThat(cmdline.replace('\0', ' '))
            .as("%s's process", host)
            .contains("/releases/" + next + "/lib");
        String journal = exec(host, "journalctl", "-u", unit, "--no-pager", "-o", "cat").output();
        // systemd never had to kill anything: every stop ended by itself within TimeoutStopSec.
        assertThat(journal).as("%s's journal", host).doesNotContain("timed out", "Killing");
        if (host.startsWith("w")) {
          assertThat(journal).as("%s's journal", host).contains("sealed", "stopped");
        }
      }

      restarts();
    } finally {
      for (String host : hosts) {
        podman.run(log, COMMAND_TIMEOUT, "rm", "-f", "-t", "5", container(host));
      }
    }
  }

  /**
   * The units as installed: verified by systemd-analyze, and their settings as systemd reads them.
   */
  private void checkUnits() throws Exception {
    for (String host : List.of("m1", "w1")) {
      String unit = unit(host);
      Exec verify =
          exec(host, "systemd-analyze", "verify", "/etc/systemd/system/" + unit + ".service");
      assertThat(verify.exitCode()).as("systemd-analyze verify:%n%s", verify.output()).isZero();
      assertThat(verify.output().lines().filter(l -> l.contains("faro")))
          .as("what systemd-analyze says of %s", unit)
          .isEmpty();
      String shown =
          exec(
                  host,
                  "systemctl",
                  "show",
                  unit,
                  "-p",
                  "ActiveState,User,LimitNOFILE,TasksMax,Restart,TimeoutStopUSec,KillMode")
              .output();
      // What the unit in deploy/systemd says is what systemd runs it with.
      List<String> expected = new ArrayList<>(List.of("ActiveState=active", "User=faro"));
      Path file = Path.of(System.getProperty("faro.deploy.dir"), "systemd", unit + ".service");
      for (String line : Files.readAllLines(file)) {
        if (line.matches("(LimitNOFILE|TasksMax|Restart|KillMode)=.*")) {
          expected.add(line.trim());
        }
      }
      assertThat(expected).as("settings of %s", file).hasSize(6);
      // A worker's stop timeout is the role's drop-in's: faro_graceful_timeout_seconds (60) and
      // faro_stop_margin_seconds (60), above the timeout; a master's, the unit's 60 s.
      expected.add(host.startsWith("w") ? "TimeoutStopUSec=2min" : "TimeoutStopUSec=1min");
      assertThat(shown.lines().toList()).as("%s as systemd runs it", unit).containsAll(expected);
      // The limit reaches the process, up to the host's hard limit (this machine's: podman's
      // --ulimit); without LimitNOFILE systemd would give it 1024, as the second line shows.
      String pid = exec(host, "systemctl", "show", unit, "-p", "MainPID", "--value").output();
      String limits = exec(host, "cat", "/proc/" + pid.trim() + "/limits").output();
      String hard = exec(host, "sh", "-c", "ulimit -Hn").output().trim();
      assertThat(limits.lines().filter(l -> l.startsWith("Max open files")).findFirst().orElse(""))
          .as("%s's open-file limit", unit)
          .matches("Max open files\\s+" + hard + "\\s+" + hard + "\\s+files\\s*");
      String plain =
          exec(host, "systemd-run", "--wait", "--pipe", "--quiet", "sh", "-c", "ulimit -Sn")
              .output()
              .trim();
      assertThat(plain).as("a unit's soft open-file limit without LimitNOFILE").isEqualTo("1024");
    }
  }

  /**
   * A worker killed with SIGKILL is restarted by systemd on its id and disks; a {@code systemctl
   * restart} is a graceful stop and a start. Both are timed from the signal until the masters list
   * the new process as serving.
   */
  private void restarts() throws Exception {
    String w1 = WORKERS.get("w1") + ":9100";
    long killedAt = System.currentTimeMillis();
    exec("w1", "systemctl", "kill", "-s", "KILL", "faro-worker");
    admin(
        "await-worker",
        "--id",
        w1,
        "--state",
        "serving",
        "--started-after",
        "" + killedAt,
        "--wait",
        "120s");
    long crash = System.currentTimeMillis() - killedAt;
    String restarts =
        exec("w1", "systemctl", "show", "faro-worker", "-p", "NRestarts", "--value").output();
    assertThat(restarts.trim()).as("restarts of faro-worker after its SIGKILL").isEqualTo("1");

    long restartedAt = System.currentTimeMillis();
    Exec restart = exec("w1", "systemctl", "restart", "faro-worker");
    assertThat(restart.exitCode()).as(restart.output()).isZero();
    admin(
        "await-worker",
        "--id",
        w1,
        "--state",
        "serving",
        "--started-after",
        "" + restartedAt,
        "--wait",
        "120s");
    long graceful = System.currentTimeMillis() - restartedAt;
    System.out.printf(
        "systemd: a worker killed with SIGKILL serves again after %d ms (RestartSec=5s); "
            + "systemctl restart takes it out of service for %d ms%n",
        crash, graceful);
  }

  // ------------------------------------------------------------------ hosts and commands

  private static Map<String, String> hosts(String prefix, String addressPrefix, int count) {
    if (count < 1 || count > 9) {
      throw new IllegalArgumentException(prefix + " hosts: " + count + " (allowed: 1 to 9)");
    }
    Map<String, String> hosts = new LinkedHashMap<>();
    for (int i = 1; i <= count; i++) {
      hosts.put(prefix + i, addressPrefix + i);
    }
    return hosts;
  }

  private static List<String> hosts() {
    List<String> all = new ArrayList<>(new java.util.TreeSet<>(MASTERS.keySet()));
    all.addAll(new java.util.TreeSet<>(WORKERS.keySet()));
    return all;
  }

  private static String container(String host) {
    return "faro-sd-" + host;
  }

  private static String unit(String host) {
    return host.startsWith("m") ? "faro-master" : "faro-worker";
  }

  private record Exec(int exitCode, String output) {}

  private Exec exec(String host, String... command) {
    List<String> args = new ArrayList<>(List.of("podman", "exec", container(host)));
    args.addAll(List.of(command));
    try {
      Path out = Files.createTempFile(dir, "exec", ".out");
      ProcessBuilder b = podman.builder(args).redirectErrorStream(true);
      b.redirectOutput(out.toFile());
      Process p = b.start();
      if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", args) + " did not end");
      }
      return new Exec(p.exitValue(), Files.readString(out));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** {@code bin/faro admin ARGS} on m1, with its settings (and admin secret); must succeed. */
  private String admin(String... args) {
    List<String> command =
        new ArrayList<>(List.of("/opt/faro/current/bin/faro", "admin", args[0], "--conf", CONF));
    command.addAll(List.of(args).subList(1, args.length));
    Exec run = exec("m1", command.toArray(String[]::new));
    assertThat(run.exitCode()).as("faro admin %s:%n%s", args[0], run.output()).isZero();
    return run.output();
  }

  // ------------------------------------------------------------------ the inventory

  /** The masters and workers, each a container at its own 127.0.0.x, default ports. */
  private Path writeInventory(Path tarball, String version) throws IOException {
    Map<String, Object> masters = new LinkedHashMap<>();
    for (String m : new java.util.TreeSet<>(MASTERS.keySet())) {
      String address = MASTERS.get(m);
      Map<String, Object> vars = host(m, address);
      vars.put("faro_master_id", m);
      vars.put("faro_settings", Map.of("faro.master.host", address));
      masters.put(m, vars);
    }
    Map<String, Object> workers = new LinkedHashMap<>();
    for (String w : new java.util.TreeSet<>(WORKERS.keySet())) {
      String address = WORKERS.get(w);
      Map<String, Object> vars = host(w, address);
      vars.put("faro_worker_dirs", List.of("/data/faro:ssd"));
      vars.put(
          "faro_settings",
          Map.of("faro.worker.bind.host", address, "faro.worker.chunk.size", "256k"));
      workers.put(w, vars);
    }
    Map<String, Object> common = new LinkedHashMap<>();
    common.put("faro_service_manager", "systemd");
    common.put("faro_java_opts", "-Xms64m -Xmx384m -XX:MaxDirectMemorySize=768m");
    common.put("faro_version", version);
    common.put("faro_tarball", tarball.toString());
    common.put("faro_ready_timeout_seconds", 120);
    common.put("faro_secrets_dir", dir.resolve("faro-secrets").toString());
    Map<String, Object> all = new LinkedHashMap<>();
    all.put("vars", common);
    all.put(
        "children",
        Map.of("faro_masters", Map.of("hosts", masters), "faro_workers", Map.of("hosts", workers)));
    Path file = dir.resolve("inventory.json");
    Files.writeString(file, Json.write(Map.of("all", all)), StandardCharsets.UTF_8);
    return file;
  }

  /**
   * A host's connection (the podman plugin into its container, whose python3 runs the modules) and
   * address; per host, not in all's vars, which the controller's implicit localhost reads too.
   */
  private static Map<String, Object> host(String name, String address) {
    Map<String, Object> vars = new LinkedHashMap<>();
    vars.put("ansible_connection", "containers.podman.podman");
    vars.put("ansible_host", container(name));
    vars.put("ansible_python_interpreter", "/usr/bin/python3");
    // Not under /tmp: with systemd as PID 1 podman mounts a tmpfs there, which the plugin, copying
    // into the container's file system from outside, does not see.
    vars.put("ansible_remote_tmp", "/root/.ansible/tmp");
    vars.put("faro_host", address);
    return vars;
  }
}
