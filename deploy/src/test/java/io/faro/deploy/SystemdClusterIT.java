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
 * deploy/ansible's systemd mode for real, from the last release to this build: one container per
 * master and worker with systemd as PID 1 (Debian, from
 * deploy/src/test/containers/systemd-host.Containerfile), each an emulated host on its own
 * 127.0.0.x of the host's network, reached by Ansible through the podman connection plugin of
 * PyPI's ansible package. site.yml installs the last release (UpgradeFromLastReleaseIT's, built
 * from this repository's history) on three masters and three workers unless set, as units;
 * systemd-analyze verifies the units and systemd shows the limits, restart policy and stop timeout
 * they set. A Spark job with that release's client jar (its own JVM, on the host) runs while
 * rolling-upgrade.yml moves every member to this build with systemctl: the answer is the built-in
 * shuffle's, with no stage re-run and no failed task, every worker's stop was graceful (nothing
 * killed), and every unit's process runs the new release. Then systemd restarts a worker killed
 * with SIGKILL (Restart=on-failure), and the test measures how long a worker is out of service for
 * that and for a {@code systemctl restart}. A roll back to the last release works while the cluster
 * is at its first feature level; after a roll forward, the level is raised to this build's highest,
 * a job with this build's client runs, and a roll back is refused before anything stops.
 *
 * <p>Not in .ci/run (17 minutes here): deploy/README.md gives the command run before each release.
 */
class SystemdClusterIT {
  private static final String HOST_IMAGE = "localhost/faro-systemd-host:test";
  private static final String SCALE = "0.02";
  private static final Duration PLAYBOOK_TIMEOUT = Duration.ofMinutes(15);
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(3);
  private static final String LAST_VERSION = "release-" + UpgradeFromLastReleaseIT.LAST_RELEASE;

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
  private Ansible ansible;
  private Path inventory;

  @Test
  void ansibleRollsTheUnitsFromTheLastReleaseAndBackOnlyBeforeTheLevelIsRaised() throws Exception {
    podman = Podman.forTests();
    log = dir.resolve("podman.log");
    podman.ensureBaseImage(log);
    podman.build(
        HOST_IMAGE,
        "deploy/src/test/containers/systemd-host.Containerfile",
        log,
        "BASE_IMAGE=" + Podman.BASE_IMAGE);
    Path deploy = Path.of(System.getProperty("faro.deploy.dir"));
    EarlierRelease last =
        EarlierRelease.build(
            deploy.getParent(),
            UpgradeFromLastReleaseIT.LAST_RELEASE,
            deploy.resolve("target").resolve("earlier-releases"));
    Path lastTarball = last.tarball();
    Path tarball = Path.of(System.getProperty("faro.dist.tarball"));
    String version = tarball.getFileName().toString().replaceAll("^faro-|\\.tar\\.gz$", "");
    ansible =
        // A venv of its own: the other tests time their rolls with ansible-core alone.
        Ansible.withCollections(
                Path.of(System.getProperty("faro.deploy.venv") + "-collections"),
                deploy.resolve("ansible"))
            .withEnvironment(podman.environment());
    inventory = writeInventory(lastTarball, LAST_VERSION);
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
      assertRelease(LAST_VERSION);

      // A job of the last release's client jar, which outlasts the roll of every member.
      SparkJobRunner oldJobs = new SparkJobRunner(dir, last.jars());
      String expected = Json.string(oldJobs.builtin("large", SCALE, List.of()), "checksum");
      SparkJobRunner.Started job =
          oldJobs.start(
              "large",
              "faro",
              SCALE,
              ENDPOINTS,
              "rolled",
              List.of(
                  // Maps of about 0.3 s per unit of pause: 6 hosts, about 6 minutes.
                  CompareJobs.MAP_PAUSE_KEY + "=" + 200 * hosts.size(),
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
      int rolled = roll(tarball, version, ansibleLog);
      System.out.printf(
          "rolling-upgrade.yml moved %d masters and %d workers (systemd units) from %s to %s"
              + " in %d s under a job%n",
          MASTERS.size(),
          WORKERS.size(),
          LAST_VERSION,
          version,
          (System.currentTimeMillis() - rollStart) / 1000);
      assertThat(rolled).as("rolling-upgrade.yml; see %s", ansibleLog).isZero();
      assertThat(job.process().isAlive()).as("the job still runs when the roll ends").isTrue();
      // Paced for the slowest roll seen here (about 300 s): after a faster one it runs on a while.
      String result = job.awaitResult(Duration.ofMinutes(10));
      assertThat(Json.string(result, "checksum")).isEqualTo(expected);
      assertThat(Json.number(result, "stage_retries")).as("stage retries").isZero();
      assertThat(Json.number(result, "failed_tasks")).as("failed tasks").isZero();
      assertRelease(version);
      for (String host : hosts) {
        String journal =
            exec(host, "journalctl", "-u", unit(host), "--no-pager", "-o", "cat").output();
        // systemd never had to kill anything: every stop ended by itself within TimeoutStopSec.
        assertThat(journal).as("%s's journal", host).doesNotContain("timed out", "Killing");
        if (host.startsWith("w")) {
          assertThat(journal).as("%s's journal", host).contains("sealed", "stopped");
        }
      }

      restarts();
      rollBackOnlyBeforeTheLevelIsRaised(lastTarball, tarball, version);
    } finally {
      for (String host : hosts) {
        podman.run(log, COMMAND_TIMEOUT, "rm", "-f", "-t", "5", container(host));
      }
    }
  }

  /**
   * At the cluster's first level the last release can come back, and this build again; then the
   * level is raised to this build's highest, a job of this build's client runs, and a roll back is
   * refused with the level named, before any member stops.
   */
  private void rollBackOnlyBeforeTheLevelIsRaised(Path lastTarball, Path tarball, String version)
      throws Exception {
    Path backLog = dir.resolve("ansible-back.log");
    assertThat(roll(lastTarball, LAST_VERSION, backLog))
        .as("a roll back at level 1; see %s", backLog)
        .isZero();
    assertRelease(LAST_VERSION);
    Path forthLog = dir.resolve("ansible-forth.log");
    assertThat(roll(tarball, version, forthLog))
        .as("a roll forth again; see %s", forthLog)
        .isZero();
    assertRelease(version);

    String supported = exec("m1", "/opt/faro/current/bin/faro", "version", "--json").output();
    int highest =
        (int) Json.number(supported.substring(supported.indexOf('{')), "max_feature_level");
    assertThat(highest).as("this build's highest feature level").isGreaterThan(1);
    admin("feature-level", "set", "" + highest);
    String shown = admin("feature-level", "show", "--json");
    assertThat(Json.number(shown.substring(shown.indexOf('{')), "feature_level"))
        .isEqualTo(highest);

    SparkJobRunner newJobs = new SparkJobRunner(dir);
    String expected = Json.string(newJobs.builtin("large", SCALE, List.of()), "checksum");
    String second = newJobs.run("large", "faro", SCALE, ENDPOINTS, "after-raise");
    assertThat(Json.string(second, "checksum")).isEqualTo(expected);
    assertThat(Json.number(second, "failed_tasks")).as("failed tasks").isZero();

    Map<String, String> pids = new LinkedHashMap<>();
    for (String host : hosts()) {
      pids.put(host, mainPid(host));
    }
    Path refusedLog = dir.resolve("ansible-refused.log");
    assertThat(roll(lastTarball, LAST_VERSION, refusedLog))
        .as("a roll back after the level was raised; see %s", refusedLog)
        .isNotZero();
    assertThat(Files.readString(refusedLog).replaceAll("\\s+", " "))
        .contains(
            "The cluster runs at feature level "
                + highest
                + ", and release "
                + LAST_VERSION
                + " supports levels up to 1")
        .contains("a roll back is possible only before the level is raised");
    for (String host : hosts()) {
      assertThat(mainPid(host))
          .as("%s's process after the refused roll", host)
          .isEqualTo(pids.get(host));
    }
    assertRelease(version);
    System.out.printf(
        "rolled back to %s and forth at level 1; at level %d the roll back was refused%n",
        LAST_VERSION, highest);
  }

  /** rolling-upgrade.yml to {@code tarball} as release {@code release}; returns its exit code. */
  private int roll(Path tarball, String release, Path ansibleLog) throws Exception {
    return ansible.playbook(
        "rolling-upgrade.yml",
        inventory,
        ansibleLog,
        PLAYBOOK_TIMEOUT,
        "faro_tarball=" + tarball,
        "faro_version=" + release);
  }

  /** Every unit's process runs {@code release} (its class path is that release's lib/). */
  private void assertRelease(String release) {
    for (String host : hosts()) {
      String cmdline = exec(host, "cat", "/proc/" + mainPid(host) + "/cmdline").output();
      assertThat(cmdline.replace('\0', ' '))
          .as("%s's process", host)
          .contains("/releases/" + release + "/lib");
    }
  }

  private String mainPid(String host) {
    return exec(host, "systemctl", "show", unit(host), "-p", "MainPID", "--value").output().trim();
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
      String limits = exec(host, "cat", "/proc/" + mainPid(host) + "/limits").output();
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
    List<String> command = new ArrayList<>(List.of("/opt/faro/current/bin/faro", "admin"));
    // Last: --conf is an option of the innermost command (feature-level set's, not its group's).
    command.addAll(List.of(args));
    command.addAll(List.of("--conf", CONF));
    Exec run = exec("m1", command.toArray(String[]::new));
    assertThat(run.exitCode())
        .as("faro admin %s:%n%s", String.join(" ", args), run.output())
        .isZero();
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
