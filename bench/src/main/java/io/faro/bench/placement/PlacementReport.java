package io.faro.bench.placement;

import io.faro.bench.placement.PlacementTally.Group;
import io.faro.bench.placement.PlacementTally.Tier;
import io.faro.bench.placement.SimulatedCluster.Kind;
import io.faro.bench.report.JsonReport;
import io.faro.bench.report.MachineFacts;
import io.faro.bench.report.TableReport;
import io.faro.common.config.ConfigOption;
import io.faro.master.MasterServerOptions;
import io.faro.master.MasterServerOptions.SlotsPolicy;
import io.faro.master.placement.LoadAwarePlacement;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code bench-placement} found, as a table and as JSON with the same figures. Slots are the
 * partitions placed over all measured requests; a disk's room is its usable bytes divided by the
 * estimated partition size, before the first request.
 *
 * <p>A table and a JSON form of the same figures ({@link PlacementTally}'s), written side by side
 * so that the two never say different things.
 */
final class PlacementReport {
  /** Bumped only if an existing key changes meaning. */
  static final int FORMAT_VERSION = 1;

  private final PlacementBench.Settings settings;
  private final PlacementBench.Result result;
  private final MachineFacts machine;
  private final Instant date;
  private final PlacementTally tally;

  PlacementReport(
      PlacementBench.Settings settings,
      PlacementBench.Result result,
      MachineFacts machine,
      Instant date) {
    this.settings = settings;
    this.result = result;
    this.machine = machine;
    this.date = date;
    this.tally = new PlacementTally(settings, result);
  }

  /**
   * How many times the slots per disk of {@code faster} are those of {@code slower}; null when the
   * slower group got none (its tier was not needed, say).
   */
  private static Double ratio(Group faster, Group slower) {
    return slower.perDisk() == 0 ? null : faster.perDisk() / slower.perDisk();
  }

  /** The ratio load-aware placement aims at between two groups of one tier. */
  private double expectedRatio(Group faster, Group slower) {
    return Math.pow(settings.loadAware().gradient(), slower.group() - faster.group());
  }

  private int maxWorkersPerRequest() {
    return Arrays.stream(result.workersPerRequest()).max().orElse(0);
  }

  private int minWorkersPerRequest() {
    return Arrays.stream(result.workersPerRequest()).min().orElse(0);
  }

  private String tiersText() {
    return String.join(
        ",",
        settings.shape().tiers().stream()
            .map(
                t ->
                    t.tier().configName()
                        + ":"
                        + t.count()
                        + ":"
                        + ConfigOption.formatSize(t.bytes()))
            .toList());
  }

  private int count(Kind kind) {
    int n = 0;
    for (int w = 0; w < settings.shape().workers(); w++) {
      for (int d = 0; d < result.cluster().disksPerWorker(); d++) {
        n += result.cluster().kind(w, d) == kind ? 1 : 0;
      }
    }
    return n;
  }

  String table() {
    StringBuilder out = new StringBuilder();
    appendHeader(out);
    List<String[]> rows = new ArrayList<>();
    rows.add(row("allocation latency p50", result.latencies().percentileMillis(0.5), "ms", ""));
    rows.add(row("allocation latency p99", result.latencies().percentileMillis(0.99), "ms", ""));
    rows.add(
        row(
            "allocation latency max",
            result.maxNanos() / 1e6,
            "ms",
            "PlacementPolicy.place of each request, as the leader runs it before the Raft commit"));
    rows.add(row("slots", tally.slots(), "", "partitions placed over all measured requests"));
    for (Tier t : tally.tiers()) {
      tierRows(rows, t);
    }
    checkRows(rows);
    TableReport.appendRows(out, rows);
    return out.toString();
  }

  /** What ran, on which simulated cluster, with which settings, on which machine. */
  private void appendHeader(StringBuilder out) {
    SimulatedCluster.Shape shape = settings.shape();
    out.append(
        String.format(
            Locale.ROOT,
            "Faro bench-placement: %s placement of %d requests x %d partitions, after %d warm-up "
                + "requests%n",
            policyName(),
            settings.requests(),
            settings.partitions(),
            settings.warmups()));
    out.append(
        String.format(
            Locale.ROOT,
            "cluster: %d workers x %d disks (%s), %d full, %d broken, %d slow (%.0fx the time per "
                + "MiB), spread %s, seed %d%n",
            shape.workers(),
            shape.disksPerWorker(),
            tiersText(),
            count(Kind.FULL),
            count(Kind.BROKEN),
            count(Kind.SLOW),
            SimulatedCluster.SLOW_FACTOR,
            plain(shape.spread()),
            shape.seed()));
    LoadAwarePlacement.Settings s = settings.loadAware();
    out.append(
        String.format(
            Locale.ROOT,
            "settings: at most %d workers per shuffle, %d groups, gradient %s, weights %s/%s, "
                + "partition size %s%n",
            s.maxWorkersPerShuffle(),
            s.diskGroups(),
            plain(s.gradient()),
            plain(s.flushWeight()),
            plain(s.fetchWeight()),
            ConfigOption.formatSize(settings.partitionBytes())));
    out.append(
        String.format(
            Locale.ROOT,
            "machine: %d cores, %s, Java %s, load %.2f at start%n%n",
            machine.cores(),
            machine.cpuModel(),
            machine.javaVersion(),
            machine.loadAverage()));
  }

  /** The slots of one tier, of each of its groups and of its slow disks. */
  private void tierRows(List<String[]> rows, Tier t) {
    String name = t.tier().configName();
    rows.add(
        row(
            name + " slots",
            t.slots(),
            "",
            String.format(
                Locale.ROOT,
                "%d disks, %d usable: %s per usable disk",
                t.disks(),
                t.usableDisks(),
                TableReport.format(
                    t.usableDisks() == 0 ? 0 : t.slots() / (double) t.usableDisks()))));
    List<Group> groups = t.groups();
    for (int i = 0; i < groups.size(); i++) {
      Group g = groups.get(i);
      String note = String.format(Locale.ROOT, "%d disks, %d slots", g.disks(), g.slots());
      if (i + 1 < groups.size()) {
        Group next = groups.get(i + 1);
        Double ratio = ratio(g, next);
        note +=
            String.format(
                Locale.ROOT,
                "; %sx group %d",
                ratio == null ? "-" : TableReport.format(ratio),
                next.group());
        if (settings.policy() == SlotsPolicy.LOAD_AWARE) {
          note += " (aimed at " + TableReport.format(expectedRatio(g, next)) + ")";
        }
      }
      rows.add(row(name + " group " + g.group(), g.perDisk(), "per disk", note));
    }
    if (t.slowDisks() > 0) {
      rows.add(
          row(
              name + " slow disks",
              t.slowPerDisk(),
              "per disk",
              String.format(
                  Locale.ROOT,
                  "%d disks; the other %d usable: %s per disk",
                  t.slowDisks(),
                  t.otherDisks(),
                  TableReport.format(t.otherPerDisk()))));
    }
  }

  /** What must never happen (slots on full or broken disks) and the spread's bounds. */
  private void checkRows(List<String[]> rows) {
    LoadAwarePlacement.Settings s = settings.loadAware();
    rows.add(
        row(
            "slots on full disks",
            tally.onFull(),
            "",
            tally.onFull() == 0 ? "none, as it must be" : "BUG"));
    rows.add(
        row(
            "slots on broken disks",
            tally.onBroken(),
            "",
            tally.onBroken() == 0 ? "none, as it must be" : "BUG"));
    rows.add(
        row(
            "most slots on one disk",
            tally.mostOnOneDisk(),
            "",
            String.format(
                Locale.ROOT,
                "its room %d (usable bytes / partition size); %d disks past their room",
                tally.roomOfThatDisk(),
                tally.disksPastTheirRoom())));
    rows.add(
        row(
            "workers per request",
            maxWorkersPerRequest(),
            "max",
            String.format(
                Locale.ROOT,
                "min %d; cap %d (%s)",
                minWorkersPerRequest(),
                s.maxWorkersPerShuffle(),
                MasterServerOptions.MAX_WORKERS_PER_SHUFFLE.key())));
  }

  /** A setting as it was given: 1.1, 0.5, 2. */
  private static String plain(double value) {
    return BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
  }

  private static String[] row(String name, double value, String unit, String note) {
    return new String[] {name, TableReport.format(value), unit, note};
  }

  private static String[] row(String name, long value, String unit, String note) {
    return new String[] {name, Long.toString(value), unit, note};
  }

  private String policyName() {
    return settings.policy().name().toLowerCase(Locale.ROOT);
  }

  /** The report as JSON: snake_case keys that keep their meaning, as the other bench reports. */
  Map<String, Object> json() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("format_version", FORMAT_VERSION);
    out.put("date", date.toString());
    out.put("policy", policyName());
    out.put("allocation_latency_p50_ms", round(result.latencies().percentileMillis(0.5)));
    out.put("allocation_latency_p99_ms", round(result.latencies().percentileMillis(0.99)));
    out.put("allocation_latency_max_ms", round(result.maxNanos() / 1e6));
    out.put("requests", settings.requests());
    out.put("warmup_requests", settings.warmups());
    out.put("partitions_per_request", settings.partitions());
    out.put("slots", tally.slots());
    out.put("slots_on_full_disks", tally.onFull());
    out.put("slots_on_broken_disks", tally.onBroken());
    out.put("most_slots_on_one_disk", tally.mostOnOneDisk());
    out.put("room_of_that_disk", tally.roomOfThatDisk());
    out.put("disks_past_their_room", tally.disksPastTheirRoom());
    out.put("workers_per_request_max", maxWorkersPerRequest());
    out.put("workers_per_request_min", minWorkersPerRequest());
    out.put("max_workers_per_shuffle", settings.loadAware().maxWorkersPerShuffle());
    List<Object> tierList = new ArrayList<>();
    for (Tier t : tally.tiers()) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("tier", t.tier().configName());
      entry.put("disks", t.disks());
      entry.put("usable_disks", t.usableDisks());
      entry.put("slots", t.slots());
      List<Object> groupList = new ArrayList<>();
      for (int i = 0; i < t.groups().size(); i++) {
        Group g = t.groups().get(i);
        Map<String, Object> group = new LinkedHashMap<>();
        group.put("group", g.group());
        group.put("disks", g.disks());
        group.put("slots", g.slots());
        group.put("slots_per_disk", round(g.perDisk()));
        if (i + 1 < t.groups().size()) {
          Group next = t.groups().get(i + 1);
          Double ratio = ratio(g, next);
          group.put("next_group", next.group());
          group.put("ratio_to_next_group", ratio == null ? null : round(ratio));
          group.put("aimed_ratio_to_next_group", round(expectedRatio(g, next)));
        }
        groupList.add(group);
      }
      entry.put("groups", groupList);
      entry.put("slow_disks", t.slowDisks());
      entry.put("slow_slots_per_disk", round(t.slowPerDisk()));
      entry.put("other_disks", t.otherDisks());
      entry.put("other_slots_per_disk", round(t.otherPerDisk()));
      tierList.add(entry);
    }
    out.put("tiers", tierList);
    out.put(
        "units",
        "latencies in milliseconds of PlacementPolicy.place per request; slots are partitions "
            + "placed over all measured requests; room is usable bytes / partition size");
    out.put("settings", settingsJson());
    out.put("machine", JsonReport.machine(machine));
    return out;
  }

  private Map<String, Object> settingsJson() {
    SimulatedCluster.Shape shape = settings.shape();
    LoadAwarePlacement.Settings s = settings.loadAware();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("workers", shape.workers());
    out.put("disks_per_worker", shape.disksPerWorker());
    out.put("tiers", tiersText());
    out.put("full_disks", count(Kind.FULL));
    out.put("broken_disks", count(Kind.BROKEN));
    out.put("slow_disks", count(Kind.SLOW));
    out.put("full_fraction", shape.fullFraction());
    out.put("broken_fraction", shape.brokenFraction());
    out.put("slow_fraction", shape.slowFraction());
    out.put("slow_factor", SimulatedCluster.SLOW_FACTOR);
    out.put("spread", shape.spread());
    out.put("seed", shape.seed());
    out.put("max_workers_per_shuffle", s.maxWorkersPerShuffle());
    out.put("disk_groups", s.diskGroups());
    out.put("group_gradient", s.gradient());
    out.put("flush_weight", s.flushWeight());
    out.put("fetch_weight", s.fetchWeight());
    out.put("partition_size_bytes", settings.partitionBytes());
    return out;
  }

  private static double round(double value) {
    return JsonReport.round(value);
  }
}
