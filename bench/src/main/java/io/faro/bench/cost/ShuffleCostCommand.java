package io.faro.bench.cost;

import io.faro.bench.cluster.BenchCluster;
import io.faro.bench.cluster.ClusterTarget;
import io.faro.cli.FaroSubcommand;
import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.driver.ShufflePhaseStats;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.common.batch.Batch;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bin/faro bench-shuffle-cost}: what a shuffle costs beyond its data, phase by phase, as a
 * driver and its tasks see it through the client library. The driver registers the shuffle (which
 * places it, see faro.client.placement.at.register), then, {@code --lead-ms} later as Spark's
 * scheduling would, the first map task runs (its push locations, its mapper end), then the others,
 * then the commit with the reducers' metadata (the first reader's wait for the file groups), and a
 * reduce task reading partition 0 (empty, or {@code --record-bytes} from each map). Every shuffle
 * is new; medians and 90th/99th percentiles over {@code --shuffles}, and the driver's own timings
 * of each phase ({@link ShufflePhaseStats}).
 */
@Command(
    name = "bench-shuffle-cost",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Measures the fixed cost of a shuffle, phase by phase: registration and placement, the"
            + " first map task, the other map tasks, commit and reducer metadata, a reduce task"
            + " reading a partition (empty by default). Loopback only for --local-cluster.")
public final class ShuffleCostCommand implements Callable<Integer>, FaroSubcommand {
  @Option(
      names = "--masters",
      split = ",",
      paramLabel = "HOST:PORT",
      description = "Masters of a running cluster to measure.")
  List<String> masters;

  @Option(
      names = "--local-cluster",
      description = "Start a local cluster (1 master, --workers workers) and stop it at the end.")
  boolean localCluster;

  @Option(
      names = "--workers",
      defaultValue = "2",
      description = "Workers of the local cluster (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(
      names = "--shuffles",
      defaultValue = "200",
      description = "Shuffles measured (default: ${DEFAULT-VALUE}).")
  int shuffles;

  @Option(
      names = "--warmup",
      defaultValue = "50",
      description = "Shuffles run first, unmeasured (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--maps",
      defaultValue = "2",
      description = "Map tasks per shuffle (default: ${DEFAULT-VALUE}).")
  int maps;

  @Option(
      names = "--partitions",
      defaultValue = "8",
      description = "Partitions per shuffle (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(
      names = "--record-bytes",
      defaultValue = "0",
      description =
          "Bytes each map task writes to every partition (default: ${DEFAULT-VALUE}: no data),"
              + " as one record each: the commit then finishes a small file per partition, and"
              + " the reduce task's read of partition 0 reaches the first fetchable byte.")
  int recordBytes;

  @Option(
      names = "--lead-ms",
      defaultValue = "0",
      description =
          "Milliseconds between a shuffle's registration and its first map task (default:"
              + " ${DEFAULT-VALUE}). Spark takes tens of milliseconds to schedule a map stage after"
              + " it registers its shuffle; 0 measures the worst case, a map task asking at once.")
  int leadMillis;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the report as JSON.")
  Path json;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  /** The driver's timings of the measured shuffles' phases. */
  private ShufflePhaseStats driverPhases;

  /** Nanoseconds of each phase of each measured shuffle. */
  private record Phases(long[] firstMap, long[] otherMaps, long[] commit, long[] read) {}

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    if (localCluster == (masters != null)) {
      throw new IllegalArgumentException("give either --local-cluster or --masters");
    }
    if (shuffles < 1
        || warmup < 0
        || maps < 1
        || partitions < 1
        || recordBytes < 0
        || leadMillis < 0) {
      throw new IllegalArgumentException(
          "--shuffles, --maps and --partitions must be at least 1, --warmup, --record-bytes and"
              + " --lead-ms at least 0");
    }
    ClusterTarget target =
        localCluster
            ? new ClusterTarget.Local(workers, Optional.empty())
            : new ClusterTarget.Running(masters.stream().map(HostPort::parse).toList());
    try (BenchCluster cluster = BenchCluster.open(target, Optional.empty())) {
      out.println("Faro shuffle cost against a " + cluster.describe());
      out.flush();
      ClientSettings settings =
          ClientSettings.from(
              FaroConf.of(
                  Map.of(
                      "faro.master.endpoints",
                      String.join(",", cluster.masters().stream().map(HostPort::toString).toList()),
                      "faro.client.lifecycle.host",
                      "127.0.0.1")));
      Phases phases;
      try (ClientPool pool = new ClientPool("faro-bench-cost", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(
                  new AppId("faro-bench-cost-" + ProcessHandle.current().pid()),
                  settings,
                  pool,
                  "127.0.0.1")) {
        ShuffleClient client = new ShuffleClient(pool, settings);
        for (int s = 0; s < warmup; s++) {
          shuffle(client, lifecycle, s, null, 0);
        }
        lifecycle.phases().clear(); // the driver's own timings, of the measured shuffles only
        phases =
            new Phases(
                new long[shuffles], new long[shuffles], new long[shuffles], new long[shuffles]);
        for (int s = 0; s < shuffles; s++) {
          shuffle(client, lifecycle, warmup + s, phases, s);
        }
        driverPhases = lifecycle.phases();
      }
      Map<String, Object> report = report(phases);
      out.print(table(report));
      if (json != null) {
        Files.writeString(json, Json.write(report));
        out.println("JSON report: " + json.toAbsolutePath());
      }
      out.flush();
      return 0;
    }
  }

  /** One shuffle, start to end; its phases go to {@code phases}[{@code i}] if given. */
  private void shuffle(
      ShuffleClient client, LifecycleManager lifecycle, int s, Phases phases, int i) {
    HostPort driver = lifecycle.endpoint();
    EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), s);
    byte[] record = new byte[recordBytes];
    long others = 0;
    lifecycle.registerShuffle(s, maps, partitions); // as Spark's driver does when it plans a stage
    if (leadMillis > 0) {
      try {
        // The time Spark's scheduling leaves between a registration and its first map task: what
        // placement at registration hides in (--lead-ms says why it is a sleep).
        Thread.sleep(leadMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
    for (int m = 0; m < maps; m++) {
      long start = System.nanoTime();
      try (MapPusher pusher = client.newMapPusher(driver, shuffle, m, 0, maps, partitions)) {
        if (recordBytes > 0) {
          for (int p = 0; p < partitions; p++) {
            pusher.write(p, record, 0, record.length);
            pusher.cut(p);
          }
        }
        pusher.finish();
        client.mapperEnd(driver, shuffle, m, 0, maps, pusher.batchCounts());
      }
      long took = System.nanoTime() - start;
      if (m == 0) {
        if (phases != null) {
          phases.firstMap[i] = took;
        }
      } else {
        others += took;
      }
    }
    long commitStart = System.nanoTime();
    client.fileGroups(driver, shuffle, maps, 0);
    long commit = System.nanoTime() - commitStart;
    long readStart = System.nanoTime();
    try (PartitionReader reader = client.newReader(driver, shuffle, maps, 0, 1, 0, maps)) {
      long bytes = 0;
      for (Batch b = reader.next(); b != null; b = reader.next()) {
        bytes += b.length();
      }
      if (bytes != (long) recordBytes * maps) {
        throw new IllegalStateException(
            "shuffle " + shuffle + " read " + bytes + " bytes of " + (long) recordBytes * maps);
      }
    }
    long read = System.nanoTime() - readStart;
    lifecycle.unregisterShuffle(s);
    if (phases != null) {
      phases.otherMaps[i] = maps > 1 ? others / (maps - 1) : 0;
      phases.commit[i] = commit;
      phases.read[i] = read;
    }
  }

  private Map<String, Object> report(Phases p) {
    long[] total = new long[shuffles];
    for (int i = 0; i < shuffles; i++) {
      total[i] = p.firstMap[i] + p.otherMaps[i] * Math.max(0, maps - 1) + p.commit[i] + p.read[i];
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("shuffles", shuffles);
    report.put("maps", maps);
    report.put("partitions", partitions);
    report.put("record_bytes", recordBytes);
    report.put("lead_ms", leadMillis);
    report.put("first_map_ms", quantiles(p.firstMap));
    report.put("other_map_ms", quantiles(p.otherMaps));
    report.put("commit_and_metadata_ms", quantiles(p.commit));
    report.put("partition_read_ms", quantiles(p.read));
    report.put("shuffle_total_ms", quantiles(total));
    Map<String, Object> driver = new LinkedHashMap<>();
    for (String phase : ShufflePhaseStats.phases()) {
      if (driverPhases.count(phase) > 0) {
        Map<String, Object> q = new LinkedHashMap<>();
        for (double f : new double[] {0.5, 0.9, 0.99}) {
          q.put("p" + Math.round(f * 100), driverPhases.quantileMillis(phase, f));
        }
        driver.put(phase, q);
      }
    }
    report.put("driver_phases_ms", driver);
    return report;
  }

  private static Map<String, Object> quantiles(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    Map<String, Object> q = new LinkedHashMap<>();
    for (double f : new double[] {0.5, 0.9, 0.99}) {
      int at = Math.min(sorted.length - 1, (int) Math.ceil(f * sorted.length) - 1);
      q.put("p" + Math.round(f * 100), Math.round(sorted[Math.max(0, at)] / 1e3) / 1e3);
    }
    return q;
  }

  @SuppressWarnings("unchecked")
  private static String table(Map<String, Object> report) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "%n%d shuffles of %d maps x %d partitions, %s, first map %d ms after registration%n"
                + "%-26s %9s %9s %9s%n",
            report.get("shuffles"),
            report.get("maps"),
            report.get("partitions"),
            (int) report.get("record_bytes") == 0
                ? "no data"
                : report.get("record_bytes") + " bytes per map and partition",
            report.get("lead_ms"),
            "phase (ms)",
            "p50",
            "p90",
            "p99"));
    rows(report, out);
    out.append(
        String.format(
            Locale.ROOT,
            "%nthe driver's own timings (upper bounds of its histogram buckets, 19%% wide)%n"));
    rows((Map<String, Object>) report.get("driver_phases_ms"), out);
    return out.toString();
  }

  @SuppressWarnings("unchecked")
  private static void rows(Map<String, Object> report, StringBuilder out) {
    for (String key : new ArrayList<>(report.keySet())) {
      if (report.get(key) instanceof Map<?, ?> q && !key.equals("driver_phases_ms")) {
        Map<String, Object> m = (Map<String, Object>) q;
        out.append(
            String.format(
                Locale.ROOT,
                "%-26s %9.3f %9.3f %9.3f%n",
                key.replace("_ms", ""),
                m.get("p50"),
                m.get("p90"),
                m.get("p99")));
      }
    }
  }
}
