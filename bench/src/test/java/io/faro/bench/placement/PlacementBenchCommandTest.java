package io.faro.bench.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.cli.FaroSubcommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bin/faro bench-placement} in this process, on small simulated clusters: the report has its
 * figures, and they say what placement promises. No timing is asserted but that there is one.
 */
class PlacementBenchCommandTest {
  @TempDir Path dir;
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return new CommandLine(new PlacementBenchCommand())
        .setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true))
        .execute(args);
  }

  @Test
  void placesOnTheSimulatedClusterAndReportsSaneFigures() throws Exception {
    Path json = dir.resolve("placement.json");

    int code =
        run(
            "--workers", "50",
            "--disks", "4",
            "--partitions", "1000",
            "--requests", "5",
            "--warmup", "1",
            "--max-workers-per-shuffle", "20",
            "--json", json.toString());

    assertThat(code).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
    String report = Files.readString(json);
    for (String key :
        List.of(
            "allocation_latency_p50_ms",
            "allocation_latency_p99_ms",
            "allocation_latency_max_ms",
            "slots",
            "slots_on_full_disks",
            "slots_on_broken_disks",
            "most_slots_on_one_disk",
            "room_of_that_disk",
            "disks_past_their_room",
            "workers_per_request_max",
            "max_workers_per_shuffle",
            "tiers",
            "groups",
            "slots_per_disk",
            "slow_slots_per_disk",
            "other_slots_per_disk",
            "settings",
            "machine")) {
      assertThat(report).contains("\"" + key + "\":");
    }
    assertThat(number(report, "slots")).isEqualTo(5 * 1000);
    assertThat(number(report, "slots_on_full_disks")).isZero();
    assertThat(number(report, "slots_on_broken_disks")).isZero();
    assertThat(number(report, "disks_past_their_room")).isZero();
    assertThat(number(report, "most_slots_on_one_disk"))
        .isPositive()
        .isLessThanOrEqualTo(number(report, "room_of_that_disk"));
    assertThat(number(report, "workers_per_request_max")).isPositive().isLessThanOrEqualTo(20);
    assertThat(number(report, "max_workers_per_shuffle")).isEqualTo(20);
    assertThat(number(report, "allocation_latency_p50_ms")).isPositive();
    assertThat(number(report, "allocation_latency_max_ms"))
        .isGreaterThanOrEqualTo(number(report, "allocation_latency_p99_ms"))
        .isGreaterThanOrEqualTo(number(report, "allocation_latency_p50_ms"));
    // 2% full and 1% broken of 200 disks, and the settings default to the master's.
    assertThat(number(report, "full_disks")).isEqualTo(4);
    assertThat(number(report, "broken_disks")).isEqualTo(2);
    assertThat(number(report, "slow_disks")).isEqualTo(20);
    assertThat(number(report, "disk_groups")).isEqualTo(5);
    assertThat(number(report, "group_gradient")).isEqualTo(1.1);
    assertThat(number(report, "partition_size_bytes")).isEqualTo(64 << 20);
    assertThat(report).contains("\"policy\": \"load_aware\"");
    assertThat(out.toString())
        .contains("allocation latency p99")
        .contains("slots on full disks")
        .contains("JSON report: " + json.toAbsolutePath());
  }

  @Test
  void whatTheFastestTierHasNoRoomForGoesToTheNext() throws Exception {
    Path json = dir.resolve("tiers.json");

    // 30 NVMe disks of 16 slots (1g / 64m) each, less the full and broken ones, for 5 x 200.
    int code =
        run(
            "--workers", "30",
            "--tiers", "nvme:1:1g,hdd:3",
            "--partitions", "200",
            "--requests", "5",
            "--warmup", "0",
            "--json", json.toString());

    assertThat(code).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
    String report = Files.readString(json);
    assertThat(number(report, "disks_past_their_room")).isZero();
    assertThat(report).contains("\"tier\": \"nvme\"").contains("\"tier\": \"hdd\"");
    long nvmeSlots = (long) number(tier(report, "nvme"), "slots");
    long nvmeDisks = (long) number(tier(report, "nvme"), "usable_disks");
    assertThat(nvmeSlots).isEqualTo(nvmeDisks * 16);
    assertThat(number(tier(report, "hdd"), "slots")).isEqualTo(5 * 200 - nvmeSlots);
  }

  @Test
  void roundRobinNeverUsesFullOrBrokenDisksEither() throws Exception {
    Path json = dir.resolve("rr.json");

    int code =
        run(
            "--policy", "round_robin",
            "--workers", "20",
            "--disks", "4",
            "--full-fraction", "0.1",
            "--broken-fraction", "0.1",
            "--partitions", "500",
            "--requests", "3",
            "--json", json.toString());

    assertThat(code).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
    String report = Files.readString(json);
    assertThat(report).contains("\"policy\": \"round_robin\"");
    assertThat(number(report, "slots")).isEqualTo(3 * 500);
    assertThat(number(report, "slots_on_full_disks")).isZero();
    assertThat(number(report, "slots_on_broken_disks")).isZero();
  }

  @Test
  void aBadOptionIsNamedWithWhatItTakes() {
    assertThat(run("--tiers", "nvme:1,tape:3")).isEqualTo(2);
    assertThat(err.toString())
        .startsWith("--tiers: 'tape:3': unknown disk tier 'tape', expected one of nvme, ssd, hdd");

    err.getBuffer().setLength(0);
    assertThat(run("--gradient", "0.5")).isEqualTo(2);
    assertThat(err.toString())
        .startsWith("--gradient: Invalid value '0.5' for faro.master.slots.group.gradient");

    err.getBuffer().setLength(0);
    assertThat(run("--tiers", "nvme:1,hdd:3", "--disks", "12")).isEqualTo(2);
    assertThat(err.toString()).startsWith("--tiers nvme:1,hdd:3 gives each worker 4 disks");
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void binFaroFindsTheCommandThroughServiceLoader() {
    assertThat(ServiceLoader.load(FaroSubcommand.class).stream().map(ServiceLoader.Provider::type))
        .contains(PlacementBenchCommand.class);
    assertThat(new CommandLine(new PlacementBenchCommand()).getCommandName())
        .isEqualTo("bench-placement");
  }

  /** The entry of {@code tier} in the report's list of tiers. */
  private static String tier(String json, String tier) {
    int start = json.indexOf("\"tier\": \"" + tier + "\"");
    assertThat(start).as("tier %s in the report", tier).isNotNegative();
    int end = json.indexOf("\"tier\": ", start + 1);
    return json.substring(start, end < 0 ? json.length() : end);
  }

  /** The number under {@code key} (the first occurrence) of a JSON text. */
  private static double number(String json, String key) {
    Matcher m =
        Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(-?[0-9.]+(?:[eE][-+]?[0-9]+)?)")
            .matcher(json);
    assertThat(m.find()).as("a number under %s", key).isTrue();
    return Double.parseDouble(m.group(1));
  }
}
