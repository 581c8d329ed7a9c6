package io.faro.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.faro.common.config.ConfigOption;
import io.faro.worker.WorkerOptions;
import java.io.IOException;
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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The systemd units of deploy/systemd: read as systemd reads them (sections of key=value lines,
 * later keys adding to earlier ones), each setting that makes a restart safe is there, and {@code
 * systemd-analyze verify} finds nothing to say about them where it runs (this machine has systemd's
 * tools but not systemd as PID 1).
 */
class SystemdUnitsTest {
  private static final Path DEPLOY = Path.of(System.getProperty("faro.deploy.dir", "."));

  @TempDir Path tmp;

  /** A unit file: each section's keys, every value of a key in order. */
  private static Map<String, Map<String, List<String>>> parse(Path unit) throws IOException {
    Map<String, Map<String, List<String>>> sections = new LinkedHashMap<>();
    String section = null;
    int n = 0;
    for (String raw : Files.readAllLines(unit, StandardCharsets.UTF_8)) {
      n++;
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        section = line.substring(1, line.length() - 1);
        sections.putIfAbsent(section, new LinkedHashMap<>());
        continue;
      }
      int eq = line.indexOf('=');
      assertThat(section).as("%s:%d is outside a section", unit, n).isNotNull();
      assertThat(eq).as("%s:%d is not key=value: %s", unit, n, line).isPositive();
      sections
          .get(section)
          .computeIfAbsent(line.substring(0, eq).strip(), k -> new ArrayList<>())
          .add(line.substring(eq + 1).strip());
    }
    return sections;
  }

  private static String one(Map<String, Map<String, List<String>>> unit, String key) {
    List<String> values = unit.get("Service").get(key);
    assertThat(values).as(key).isNotNull().hasSize(1);
    return values.get(0);
  }

  @ParameterizedTest
  @ValueSource(strings = {"master", "worker"})
  void eachUnitRunsItsRoleAsItsOwnUserAndStopsAndRestartsAsARollingUpgradeNeeds(String role)
      throws IOException {
    Map<String, Map<String, List<String>>> unit =
        parse(DEPLOY.resolve("systemd/faro-" + role + ".service"));

    assertThat(unit).containsKeys("Unit", "Service", "Install");
    assertThat(one(unit, "ExecStart")).matches("/\\S+/bin/faro " + role + " --conf /\\S+\\.conf");
    assertThat(one(unit, "User")).isEqualTo("faro");
    assertThat(one(unit, "Group")).isEqualTo("faro");
    assertThat(one(unit, "KillSignal")).isEqualTo("SIGTERM");
    assertThat(one(unit, "KillMode")).isEqualTo("mixed");
    assertThat(one(unit, "Restart")).isEqualTo("on-failure");
    assertThat(one(unit, "SuccessExitStatus")).contains("143");
    assertThat(Long.parseLong(one(unit, "LimitNOFILE"))).isGreaterThanOrEqualTo(65536);
    // Set on purpose, never systemd's DefaultTasksMax (seeds/000): a number, not infinity.
    assertThat(Long.parseLong(one(unit, "TasksMax"))).isGreaterThanOrEqualTo(4096);
    assertThat(unit.get("Install").get("WantedBy")).containsExactly("multi-user.target");
  }

  @Test
  void aWorkerIsGivenLongerToStopThanItsGracefulStopMayTake() throws IOException {
    Map<String, Map<String, List<String>>> unit =
        parse(DEPLOY.resolve("systemd/faro-worker.service"));
    Duration graceful = ConfigOption.parseDuration(WorkerOptions.GRACEFUL_TIMEOUT.defaultText());
    long stopSec = Long.parseLong(one(unit, "TimeoutStopSec"));

    assertThat(stopSec).isGreaterThan(graceful.toSeconds());
    // The role's drop-in keeps the same margin for the timeout it is given.
    String defaults = Files.readString(DEPLOY.resolve("ansible/roles/faro/defaults/main.yml"));
    assertThat(defaults).contains("faro_graceful_timeout_seconds: " + graceful.toSeconds());
    assertThat(defaults).containsPattern("faro_stop_margin_seconds: [1-9]");
  }

  @ParameterizedTest
  @ValueSource(strings = {"master", "worker"})
  void systemdAnalyzeVerifyFindsNothingToSay(String role) throws Exception {
    assumeTrue(onPath("systemd-analyze"), "systemd-analyze is not installed here");
    // verify checks that ExecStart's program exists: point it at a stand-in of bin/faro.
    Path faro = Files.createDirectories(tmp.resolve("bin")).resolve("faro");
    Files.writeString(faro, "#!/bin/sh\n");
    faro.toFile().setExecutable(true);
    String text =
        Files.readString(DEPLOY.resolve("systemd/faro-" + role + ".service"))
            .replace("/opt/faro/current/bin/faro", faro.toString());
    Path unit = tmp.resolve("faro-" + role + ".service");
    Files.writeString(unit, text);

    Process verify =
        new ProcessBuilder("systemd-analyze", "verify", unit.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(verify.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(verify.waitFor(60, TimeUnit.SECONDS)).isTrue();

    // It exits 0 for settings it ignores ("Failed to parse ..."): those must not be there either.
    assertThat(verify.exitValue()).as(out).isZero();
    assertThat(out.strip()).isEmpty();
  }

  private static boolean onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }
}
