package io.faro.bench.masters;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.json.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bin/faro bench-masters --simulated-workers} on a real master process, small: the simulated
 * workers register and heartbeat, the apps register, place and unregister shuffles (several apps
 * come and go), authenticated as the cluster's members and apps are, and every phase reports what
 * it measured. No timing is asserted but that there is one.
 */
class MasterBenchFleetTest {
  @TempDir Path dir;

  @Test
  @SuppressWarnings("unchecked")
  void simulatedWorkersAndAppsGoThroughARealMasterAndEachPhaseReportsIt() throws Exception {
    Path json = dir.resolve("fleet.json");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        new CommandLine(new MasterBenchCommand())
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .execute(
                "--masters", "1",
                "--simulated-workers", "4,8",
                "--live-shuffles", "3",
                "--partitions", "16",
                "--phase-seconds", "6",
                "--warmup-seconds", "1",
                "--shuffle-seconds", "2",
                "--shuffles-per-app", "2",
                "--work-dir", dir.resolve("work").toString(),
                "--json", json.toString());
    assertThat(code).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();

    Map<String, Object> report = (Map<String, Object>) Json.parse(Files.readString(json));
    List<Map<String, Object>> phases = (List<Map<String, Object>>) report.get("phases");
    assertThat(phases).hasSize(2);
    for (int i = 0; i < 2; i++) {
      Map<String, Object> phase = phases.get(i);
      assertThat(((Number) phase.get("workers")).intValue()).isEqualTo(4 * (i + 1));
      assertThat(((Number) phase.get("alive_workers")).intValue()).isEqualTo(4 * (i + 1));
      assertCallsSucceeded(phase, "leader_heartbeats");
      // Shuffles live one to three seconds: six seconds of three live place new ones, and end some.
      assertCallsSucceeded(phase, "slot_requests");
      assertCallsSucceeded(phase, "shuffle_unregisters");
      // Two shuffles an app: new apps registered during the phase.
      assertCallsSucceeded(phase, "app_registrations");
      assertThat(((Number) phase.get("raft_entries")).longValue()).isPositive();
      assertThat(((Number) phase.get("leader_cpu_cores")).doubleValue()).isPositive();
    }
  }

  /** The phase made calls of kind {@code key}, and none failed. */
  @SuppressWarnings("unchecked")
  private static void assertCallsSucceeded(Map<String, Object> phase, String key) {
    Map<String, Object> calls = (Map<String, Object>) phase.get(key);
    assertThat(((Number) calls.get("count")).longValue()).as(key).isPositive();
    assertThat(((Number) calls.get("failures")).longValue()).as(key + " failures").isZero();
  }
}
