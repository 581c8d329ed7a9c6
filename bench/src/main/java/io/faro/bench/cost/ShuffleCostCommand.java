package io.faro.bench.cost;

import io.faro.bench.cluster.BenchCluster;
import io.faro.bench.cluster.ClusterTarget;
import io.faro.cli.FaroSubcommand;
import io.faro.client.ClientOptions;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.PartitionReader;
import io.faro.client.push.MapPusher;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
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
 * {@code bin/faro bench-shuffle-cost}: what a shuffle costs when it carries nothing, phase by
 * phase, as a driver and its tasks see it through the client library: the first map task (the
 * shuffle's registration, slot allocation on the masters and reservation on the workers happen on
 * its first call), each further map task (an empty pusher and its mapper end), the commit with the
 * reducers' metadata (the first reader's wait for the file groups), and a reduce task reading one
 * empty partition. Every shuffle is new; medians and 90th/99th percentiles over {@code --shuffles}.
 */
@Command(
    name = "bench-shuffle-cost",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Measures the fixed cost of a shuffle that carries no data, phase by phase: first map"
            + " task (register, slots, reserve), other map tasks, commit and reducer metadata, a"
            + " reduce task reading an empty partition. Loopback only for --local-cluster.")
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

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the report as JSON.")
  Path json;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  /** Nanoseconds of each phase of each measured shuffle. */
  private record Phases(long[] firstMap, long[] otherMaps, long[] commit, long[] emptyRead) {}

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    if (localCluster == (masters != null)) {
      throw new IllegalArgumentException("give either --local-cluster or --masters");
    }
    if (shuffles < 1 || warmup < 0 || maps < 1 || partitions < 1) {
      throw new IllegalArgumentException(
          "--shuffles, --maps and --partitions must be at least 1, --warmup at least 0");
    }
    ClusterTarget target =
        localCluster
            ? new ClusterTarget.Local(workers, Optional.empty())
            : new ClusterTarget.Running(masters.stream().map(HostPort::parse).toList());
    try (BenchCluster cluster = BenchCluster.open(target, Optional.empty())) {
      out.println("Faro shuffle cost against a " + cluster.describe());
      out.flush();
      ClientOptions.Settings settings =
          ClientOptions.Settings.from(
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
        phases =
            new Phases(
                new long[shuffles], new long[shuffles], new long[shuffles], new long[shuffles]);
        for (int s = 0; s < shuffles; s++) {
          shuffle(client, lifecycle, warmup + s, phases, s);
        }
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

  /**
   * One shuffle with no data, start to end; its phases go to {@code phases}[{@code i}] if given.
   */
  private void shuffle(
      ShuffleClient client, LifecycleManager lifecycle, int s, Phases phases, int i) {
    HostPort driver = lifecycle.endpoint();
    ShuffleId shuffle = new ShuffleId(lifecycle.app(), s);
    long others = 0;
    for (int m = 0; m < maps; m++) {
      long start = System.nanoTime();
      try (MapPusher pusher = client.newMapPusher(driver, shuffle, m, 0, maps, partitions)) {
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
      if (reader.next() != null) {
        throw new IllegalStateException("shuffle " + shuffle + " read data it was never given");
      }
    }
    long read = System.nanoTime() - readStart;
    lifecycle.unregisterShuffle(s);
    if (phases != null) {
      phases.otherMaps[i] = maps > 1 ? others / (maps - 1) : 0;
      phases.commit[i] = commit;
      phases.emptyRead[i] = read;
    }
  }

  private Map<String, Object> report(Phases p) {
    long[] total = new long[shuffles];
    for (int i = 0; i < shuffles; i++) {
      total[i] =
          p.firstMap[i] + p.otherMaps[i] * Math.max(0, maps - 1) + p.commit[i] + p.emptyRead[i];
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("shuffles", shuffles);
    report.put("maps", maps);
    report.put("partitions", partitions);
    report.put("first_map_ms", quantiles(p.firstMap));
    report.put("other_map_ms", quantiles(p.otherMaps));
    report.put("commit_and_metadata_ms", quantiles(p.commit));
    report.put("empty_partition_read_ms", quantiles(p.emptyRead));
    report.put("shuffle_total_ms", quantiles(total));
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
            "%n%d shuffles of %d maps x %d partitions, no data%n%-26s %9s %9s %9s%n",
            report.get("shuffles"),
            report.get("maps"),
            report.get("partitions"),
            "phase (ms)",
            "p50",
            "p90",
            "p99"));
    List<String> phases = new ArrayList<>(report.keySet());
    for (String key : phases) {
      if (report.get(key) instanceof Map<?, ?> q) {
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
    return out.toString();
  }
}
