package io.faro.bench.placement;

import io.faro.bench.SizeConverter;
import io.faro.bench.report.MachineFacts;
import io.faro.bench.report.ReportFiles;
import io.faro.cli.FaroSubcommand;
import io.faro.common.config.ConfigOption;
import io.faro.common.error.FaroException;
import io.faro.common.id.DiskTier;
import io.faro.common.json.Json;
import io.faro.master.MasterServerOptions;
import io.faro.master.MasterServerOptions.SlotsPolicy;
import io.faro.master.placement.LoadAwarePlacement;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bin/faro bench-placement}: the masters' placement code on a cluster simulated in memory,
 * without processes or a network: how long the leader takes to place one shuffle of many partitions
 * on many workers, and where the partitions go (by tier, by load group, on slow disks, never on
 * full or broken ones, within each disk's room and the worker cap). Exit codes: 0 done, 1 placement
 * failed, 2 bad options.
 */
@Command(
    name = "bench-placement",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    defaultValueProvider = PlacementBenchCommand.MasterDefaults.class,
    description = {
      "Times the masters' slot placement on a cluster simulated in memory, and shows",
      "where the partitions went. N workers x D disks of the tiers given, some full,",
      "broken or slow, at random but seeded. Disks take 0.5 (nvme), 2 (ssd) or 10",
      "(hdd) ms per MiB times a factor within --spread; a slow disk 10 times that.",
      "Places --requests shuffles of --partitions partitions each with the masters'",
      "own code (faro.master.slots.*), after unmeasured warm-up requests; a request's",
      "partitions count as open on their disks for the requests after it. Reports the",
      "allocation latency (p50, p99, max); slots per disk group of each tier and the",
      "ratio between groups; slots on slow disks against the others; slots on full",
      "and broken disks (always 0); the most slots on one disk against its room; the",
      "workers per request against the cap. A table, and JSON with --json. Placement's",
      "own random choices are not seeded, as on a master: figures vary a little.",
      "Example: bin/faro bench-placement --workers 1000 --disks 12 --partitions 10000"
    })
public final class PlacementBenchCommand implements Callable<Integer>, FaroSubcommand {
  @Spec CommandSpec spec;

  @Option(
      names = "--workers",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Workers of the simulated cluster (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(
      names = "--disks",
      paramLabel = "D",
      description = "Disks of each worker (default: 12, or as many as --tiers lists).")
  Integer disks;

  @Option(
      names = "--tiers",
      paramLabel = "SPEC",
      description =
          "Each worker's disks by tier as tier:count[:size], comma-separated, e.g. nvme:1,hdd:3 "
              + "for one NVMe and three HDDs, or nvme:1:200g,hdd:3 for a small NVMe; tier one of "
              + "nvme, ssd, hdd, the counts adding up to --disks (default: all ssd).")
  String tiers;

  @Option(
      names = "--disk-size",
      defaultValue = "4t",
      converter = SizeConverter.class,
      paramLabel = "SIZE",
      description =
          "Usable bytes of each disk that is neither full nor broken, unless --tiers gives its "
              + "tier's (default: ${DEFAULT-VALUE}).")
  long diskSize;

  @Option(
      names = "--full-fraction",
      paramLabel = "F",
      defaultValue = "0.02",
      description = "Share of all disks that report full (default: ${DEFAULT-VALUE}).")
  double fullFraction;

  @Option(
      names = "--broken-fraction",
      paramLabel = "F",
      defaultValue = "0.01",
      description = "Share of all disks that report broken (default: ${DEFAULT-VALUE}).")
  double brokenFraction;

  @Option(
      names = "--slow-fraction",
      paramLabel = "F",
      defaultValue = "0.1",
      description =
          "Share of all disks that write and read 10 times slower than the others of their tier "
              + "(default: ${DEFAULT-VALUE}).")
  double slowFraction;

  @Option(
      names = "--spread",
      paramLabel = "X",
      defaultValue = "2",
      description =
          "How many times slower the slowest of the other disks of a tier is than the fastest; "
              + "1 makes them all alike (default: ${DEFAULT-VALUE}).")
  double spread;

  @Option(
      names = "--seed",
      paramLabel = "N",
      defaultValue = "1",
      description = "Seed of the simulated cluster (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--partitions",
      paramLabel = "P",
      defaultValue = "10000",
      description = "Partitions of each request (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(
      names = "--requests",
      paramLabel = "R",
      defaultValue = "50",
      description = "Requests measured (default: ${DEFAULT-VALUE}).")
  int requests;

  @Option(
      names = "--warmup",
      paramLabel = "N",
      defaultValue = "10",
      description =
          "Requests placed first and not measured, so that the JIT compilers are done "
              + "(default: ${DEFAULT-VALUE}).")
  int warmups;

  // The master's settings: defaults from MasterServerOptions (MasterDefaults), parsed and checked
  // as the master parses and checks them.

  @Option(
      names = "--policy",
      paramLabel = "POLICY",
      description =
          "load_aware or round_robin: faro.master.slots.policy (default: ${DEFAULT-VALUE}).")
  String policy;

  @Option(
      names = "--max-workers-per-shuffle",
      paramLabel = "N",
      description =
          "Most workers one request spreads over: faro.master.slots.max.workers.per.shuffle "
              + "(default: ${DEFAULT-VALUE}).")
  String maxWorkersPerShuffle;

  @Option(
      names = "--groups",
      paramLabel = "N",
      description =
          "Load groups of each tier: faro.master.slots.disk.groups (default: ${DEFAULT-VALUE}).")
  String groups;

  @Option(
      names = "--gradient",
      paramLabel = "X",
      description =
          "Slots per disk of a group over those of the next slower one: "
              + "faro.master.slots.group.gradient (default: ${DEFAULT-VALUE}).")
  String gradient;

  @Option(
      names = "--partition-size",
      paramLabel = "SIZE",
      description =
          "Estimated partition size, which bounds each disk's room: "
              + "faro.master.slots.partition.size.initial (default: ${DEFAULT-VALUE}).")
  String partitionSize;

  @Option(
      names = "--json",
      paramLabel = "FILE",
      description = "Also write the report as JSON to FILE.")
  Path json;

  /** The master's setting behind each option that stands for one. */
  private static final Map<String, ConfigOption<?>> MASTER_SETTINGS =
      Map.of(
          "--policy", MasterServerOptions.SLOTS_POLICY,
          "--max-workers-per-shuffle", MasterServerOptions.MAX_WORKERS_PER_SHUFFLE,
          "--groups", MasterServerOptions.SLOTS_DISK_GROUPS,
          "--gradient", MasterServerOptions.SLOTS_GROUP_GRADIENT,
          "--partition-size", MasterServerOptions.SLOTS_PARTITION_SIZE_INITIAL);

  /** Defaults of the options that stand for a master setting: that setting's default. */
  static final class MasterDefaults implements CommandLine.IDefaultValueProvider {
    @Override
    public String defaultValue(ArgSpec arg) {
      if (arg instanceof OptionSpec option) {
        ConfigOption<?> setting = MASTER_SETTINGS.get(option.longestName());
        return setting == null ? null : setting.defaultText();
      }
      return null;
    }
  }

  @Override
  public Integer call() throws Exception {
    PlacementBench.Settings settings;
    try {
      settings = settings();
    } catch (ParameterException e) {
      // Checks across options happen after parsing; answer them as picocli answers a bad option.
      CommandLine line = spec.commandLine();
      return line.getParameterExceptionHandler()
          .handleParseException(e, line.getParseResult().originalArgs().toArray(String[]::new));
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    MachineFacts machine = MachineFacts.detect();
    PlacementBench.Result result;
    try {
      result = PlacementBench.run(settings);
    } catch (FaroException e) {
      // No worker with a usable disk, for example: the master would answer the same.
      err.println("faro bench-placement failed: " + e.getMessage());
      err.flush();
      return 1;
    }
    PlacementReport report = new PlacementReport(settings, result, machine, Instant.now());
    out.print(report.table());
    if (json != null) {
      ReportFiles.writeAtomically(json, Json.write(report.json()));
      out.println("JSON report: " + json.toAbsolutePath());
    }
    out.flush();
    return 0;
  }

  /** The validated settings. @throws ParameterException naming the option at fault */
  PlacementBench.Settings settings() {
    CommandLine line = spec.commandLine();
    if (workers < 1 || partitions < 1 || requests < 1 || warmups < 0) {
      throw new ParameterException(
          line, "--workers, --partitions and --requests must be positive, --warmup not negative");
    }
    int mostPartitions =
        MasterServerOptions.MAX_PARTITIONS_PER_SHUFFLE.parse(
            MasterServerOptions.MAX_PARTITIONS_PER_SHUFFLE.defaultText());
    if (partitions > mostPartitions) {
      throw new ParameterException(
          line,
          "--partitions "
              + partitions
              + " is more than a master takes in one shuffle ("
              + MasterServerOptions.MAX_PARTITIONS_PER_SHUFFLE.key()
              + " "
              + mostPartitions
              + ")");
    }
    if (diskSize <= 0) {
      throw new ParameterException(line, "--disk-size must be positive");
    }
    if (!(fullFraction >= 0 && brokenFraction >= 0 && slowFraction >= 0)
        || fullFraction + brokenFraction + slowFraction > 1) {
      throw new ParameterException(
          line,
          "--full-fraction, --broken-fraction and --slow-fraction must not be negative and must add "
              + "up to at most 1, not "
              + fullFraction
              + " + "
              + brokenFraction
              + " + "
              + slowFraction);
    }
    if (!(spread >= 1) || Double.isInfinite(spread)) {
      throw new ParameterException(line, "--spread must be at least 1 (all disks alike)");
    }
    List<SimulatedCluster.TierDisks> disksByTier = tiers(line);
    try {
      SimulatedCluster.Shape shape =
          new SimulatedCluster.Shape(
              workers, disksByTier, fullFraction, brokenFraction, slowFraction, spread, seed);
      LoadAwarePlacement.Settings loadAware =
          new LoadAwarePlacement.Settings(
              master("--max-workers-per-shuffle", maxWorkersPerShuffle),
              defaultOf(MasterServerOptions.SLOTS_FLUSH_WEIGHT),
              defaultOf(MasterServerOptions.SLOTS_FETCH_WEIGHT),
              master("--groups", groups),
              master("--gradient", gradient));
      SlotsPolicy slotsPolicy = master("--policy", policy);
      long partitionBytes = master("--partition-size", partitionSize);
      return new PlacementBench.Settings(
          shape, slotsPolicy, loadAware, partitionBytes, partitions, requests, warmups);
    } catch (IllegalArgumentException e) { // ConfigException included
      throw new ParameterException(line, e.getMessage(), e);
    }
  }

  /** {@code text} of option {@code name} parsed and checked as the master's setting behind it. */
  @SuppressWarnings("unchecked")
  private static <T> T master(String name, String text) {
    ConfigOption<T> setting = (ConfigOption<T>) MASTER_SETTINGS.get(name);
    try {
      return setting.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }

  private static <T> T defaultOf(ConfigOption<T> setting) {
    return setting.parse(setting.defaultText());
  }

  /** Each worker's disks by tier, from --tiers, --disks and --disk-size. */
  private List<SimulatedCluster.TierDisks> tiers(CommandLine line) {
    if (tiers == null) {
      int count = disks == null ? 12 : disks;
      if (count < 1) {
        throw new ParameterException(line, "--disks must be positive");
      }
      return List.of(new SimulatedCluster.TierDisks(DiskTier.SSD, count, diskSize));
    }
    List<SimulatedCluster.TierDisks> out = new ArrayList<>();
    for (String item : tiers.split(",", -1)) {
      String[] fields = item.trim().split(":", -1);
      String why = "not tier:count[:size]";
      if (fields.length == 2 || fields.length == 3) {
        try {
          DiskTier tier = DiskTier.parse(fields[0]);
          why = "count '" + fields[1].trim() + "' is not a positive number";
          int count = Integer.parseInt(fields[1].trim());
          if (count > 0) {
            why = "size '" + (fields.length == 3 ? fields[2].trim() : "") + "' is not positive";
            long bytes =
                fields.length == 3 ? new SizeConverter().convert(fields[2].trim()) : diskSize;
            if (bytes > 0) {
              out.add(new SimulatedCluster.TierDisks(tier, count, bytes));
              continue;
            }
          }
        } catch (IllegalArgumentException | CommandLine.TypeConversionException e) {
          // DiskTier names the tiers; a size that does not parse says what a size looks like.
          why = e instanceof NumberFormatException ? why : e.getMessage();
        }
      }
      throw new ParameterException(
          line,
          "--tiers: '"
              + item.trim()
              + "': "
              + why
              + "; give tier:count[:size] items, tier one of "
              + DiskTier.allowed()
              + ", e.g. --tiers nvme:1,hdd:3 or nvme:1:200g,hdd:3");
    }
    int sum = out.stream().mapToInt(SimulatedCluster.TierDisks::count).sum();
    if (disks != null && disks != sum) {
      throw new ParameterException(
          line, "--tiers " + tiers + " gives each worker " + sum + " disks, --disks " + disks);
    }
    return out;
  }
}
