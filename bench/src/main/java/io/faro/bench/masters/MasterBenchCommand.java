package io.faro.bench.masters;

import io.faro.cli.FaroSubcommand;
import io.faro.cli.LocalCluster;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.ShuffleKeyP;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bin/faro bench-masters}: what a Raft group of masters costs and how fast it recovers, on a
 * local cluster of real processes it starts (N masters, 2 workers) and stops.
 *
 * <ul>
 *   <li><b>Shuffle registrations per second</b>: for {@code --duration}, {@code --concurrency}
 *       requests at a time each register a new shuffle of {@code --partitions} partitions (a slot
 *       allocation: placement on the leader, one Raft log entry committed by a majority).
 *   <li><b>Failover</b>, {@code --failovers} times: SIGKILL the leader's process, then ask for
 *       slots through a client that knows every master, and time from the kill to the first
 *       allocation that succeeds; the killed master is restarted and catches up before the next
 *       round.
 * </ul>
 *
 * <p>With {@code --simulated-workers}, the fleet instead ({@link FleetBench}): no real worker, but
 * that many simulated ones heartbeating on a worker's schedule and applications placing and
 * unregistering shuffles, all from this process over real RPCs, with heartbeat and slot latency,
 * the leader's CPU and heap and the Raft log's growth at each number of workers and live shuffles.
 */
@Command(
    name = "bench-masters",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Measures shuffle registrations per second through a group of masters, and the time "
            + "from SIGKILL of the leader to the next successful slot allocation; with "
            + "--simulated-workers, how the masters carry a fleet of simulated workers and "
            + "applications instead.")
public final class MasterBenchCommand implements Callable<Integer>, FaroSubcommand {
  @Option(
      names = "--masters",
      defaultValue = "3",
      description = "Masters of the group (default: ${DEFAULT-VALUE}).")
  int masters;

  @Option(
      names = "--duration",
      defaultValue = "20",
      description = "Seconds of registrations (default: ${DEFAULT-VALUE}).")
  int durationSeconds;

  @Option(
      names = "--concurrency",
      defaultValue = "16",
      description =
          "Registrations in flight; in fleet mode, slot requests (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(
      names = "--partitions",
      defaultValue = "100",
      description = "Partitions per shuffle (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(
      names = "--failovers",
      defaultValue = "10",
      description = "Leader kills to time (default: ${DEFAULT-VALUE}).")
  int failovers;

  @Option(
      names = "--work-dir",
      description =
          "Directory of the local cluster (default: a temporary one, removed at the end).")
  Path workDir;

  @Option(names = "--json", description = "Also write the report as JSON to FILE.")
  Path json;

  @Mixin FleetOptions fleet = new FleetOptions();

  private final AtomicInteger shuffleIds = new AtomicInteger();
  private static final String APP = "bench-masters";

  @Override
  public Integer call() throws Exception {
    if (fleet.chosen()) {
      fleet.check(partitions);
    } else {
      checkRegistrationOptions();
    }
    boolean temporary = workDir == null;
    Path dir = temporary ? Files.createTempDirectory("faro-bench-masters-") : workDir;
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("date", Instant.now().toString());
    report.put("masters", masters);
    report.put("cores", Runtime.getRuntime().availableProcessors());
    try {
      if (fleet.chosen()) {
        fleet(dir, report);
      } else {
        registrationsAndFailovers(dir, report);
      }
    } finally {
      if (temporary) {
        deleteRecursively(dir);
      }
    }
    if (json != null) {
      Files.writeString(json, Json.write(report));
    }
    return 0;
  }

  private void checkRegistrationOptions() {
    if (masters < 1 || concurrency < 1 || partitions < 1 || durationSeconds < 1 || failovers < 0) {
      throw new IllegalArgumentException(
          "--masters, --concurrency, --partitions and --duration must be positive");
    }
    if (failovers > 0 && masters < 3) {
      throw new IllegalArgumentException(
          "failover needs at least 3 masters (a majority must survive): --masters "
              + masters
              + ", or --failovers 0");
    }
  }

  /** Registrations per second, then failovers, on masters with two real workers. */
  private void registrationsAndFailovers(Path dir, Map<String, Object> report) throws Exception {
    try (LocalCluster cluster =
            LocalCluster.start(
                dir.resolve("cluster"), LocalCluster.Options.workers(2).withMasters(masters));
        ClientPool pool =
            new ClientPool(
                "faro-bench-masters",
                NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "2")))) {
      List<HostPort> endpoints = cluster.masterEndpoints().stream().map(HostPort::parse).toList();
      try (BenchApp app =
          BenchApp.register(
              new MasterClient(pool, endpoints, Duration.ofSeconds(60), Duration.ofSeconds(5)),
              new AppId(APP))) {
        MasterClient client = app.client();
        awaitWorkers(client);

        report.putAll(registrations(client));
        System.out.printf(
            Locale.ROOT,
            "registrations: %.0f shuffles/s (%d in %.1f s, %d partitions each, %d in flight)%n",
            report.get("registrations_per_s"),
            report.get("registrations"),
            report.get("registration_seconds"),
            partitions,
            concurrency);
        if (failovers > 0) {
          List<Long> samples = new ArrayList<>();
          for (int i = 0; i < failovers; i++) {
            long ms = failover(cluster, pool, endpoints, client);
            samples.add(ms);
            System.out.printf(
                Locale.ROOT,
                "failover %d/%d: %d ms from SIGKILL of the leader to the next slot allocation%n",
                i + 1,
                failovers,
                ms);
          }
          List<Long> sorted = samples.stream().sorted().toList();
          report.put("failover_ms", samples);
          report.put("failover_median_ms", median(sorted));
          report.put("failover_max_ms", sorted.get(sorted.size() - 1));
          System.out.printf(
              Locale.ROOT,
              "failover: median %d ms, max %d ms over %d kills%n",
              median(sorted),
              sorted.get(sorted.size() - 1),
              samples.size());
        }
      }
    }
  }

  /** The fleet: simulated workers and apps, phase by phase, on masters without real workers. */
  private void fleet(Path dir, Map<String, Object> report) throws Exception {
    FleetBench.Plan plan = fleet.plan(partitions, concurrency, report);
    Path clusterDir = dir.resolve("cluster");
    try (LocalCluster cluster =
        LocalCluster.start(clusterDir, LocalCluster.Options.workers(0).withMasters(masters))) {
      report.put("phases", new FleetBench(plan, cluster, clusterDir).run());
    }
  }

  private void awaitWorkers(MasterClient client) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        allocate(client);
        return;
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        // The workers register in their own processes: nothing to wait on but another try.
        Thread.sleep(200);
      }
    }
  }

  private Map<String, Object> registrations(MasterClient client) throws InterruptedException {
    Semaphore inFlight = new Semaphore(concurrency);
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(durationSeconds);
    while (System.nanoTime() < end) {
      if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
        continue;
      }
      client
          .call(slots(), RequestSlotsResponse.class)
          .whenComplete(
              (r, e) -> {
                (e == null ? done : failed).incrementAndGet();
                inFlight.release();
              });
    }
    inFlight.acquire(concurrency);
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("registrations", done.get());
    out.put("registration_failures", failed.get());
    out.put("registration_seconds", Math.round(seconds * 10) / 10.0);
    out.put("registrations_per_s", Math.round(done.get() / seconds * 10) / 10.0);
    out.put("partitions_per_shuffle", partitions);
    out.put("concurrency", concurrency);
    return out;
  }

  /**
   * Kills the leader, times the first allocation after it, restarts it and waits for it to catch
   * up.
   */
  private long failover(
      LocalCluster cluster, ClientPool pool, List<HostPort> endpoints, MasterClient client)
      throws Exception {
    int leader = awaitLeader(pool, endpoints);
    LocalCluster.Member member =
        cluster.members().stream().filter(m -> m.role().equals("master")).toList().get(leader);
    member.process().destroyForcibly();
    long killed = System.nanoTime();
    member.process().waitFor(10, TimeUnit.SECONDS);
    allocate(client);
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
    cluster.restart(member.name());
    awaitCaughtUp(pool, endpoints);
    return ms;
  }

  private void allocate(MasterClient client) {
    client.callBlocking(slots(), RequestSlotsResponse.class);
  }

  private RequestSlotsRequest slots() {
    return RequestSlotsRequest.newBuilder()
        .setShuffle(
            ShuffleKeyP.newBuilder().setAppId(APP).setShuffleId(shuffleIds.getAndIncrement()))
        .setNumPartitions(partitions)
        .build();
  }

  static int awaitLeader(ClientPool pool, List<HostPort> endpoints) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      List<MasterStatusResponse> all = statuses(pool, endpoints);
      for (int i = 0; i < all.size(); i++) {
        if (all.get(i) != null && all.get(i).getLeaderReady()) {
          return i;
        }
      }
      // Election happens in other processes; polling their status is the only signal here.
      Thread.sleep(50);
    }
    throw new IllegalStateException("no master leads after 60 s");
  }

  private static void awaitCaughtUp(ClientPool pool, List<HostPort> endpoints)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      List<MasterStatusResponse> all = statuses(pool, endpoints);
      if (all.stream().allMatch(s -> s != null)
          && all.stream().filter(MasterStatusResponse::getLeaderReady).count() == 1
          && all.stream().map(MasterStatusResponse::getAppliedIndex).distinct().count() == 1) {
        return;
      }
      // Catching up happens in other processes; polling their status is the only signal here.
      Thread.sleep(100);
    }
    throw new IllegalStateException("the restarted master did not catch up within 60 s");
  }

  static List<MasterStatusResponse> statuses(ClientPool pool, List<HostPort> endpoints) {
    List<CompletableFuture<MasterStatusResponse>> calls =
        endpoints.stream()
            .map(
                e ->
                    pool.call(
                        e,
                        MasterStatusRequest.getDefaultInstance(),
                        MasterStatusResponse.class,
                        Duration.ofSeconds(2)))
            .toList();
    List<MasterStatusResponse> out = new ArrayList<>();
    for (CompletableFuture<MasterStatusResponse> call : calls) {
      try {
        out.add(Futures.await(call, Duration.ofSeconds(3), "master status"));
      } catch (RuntimeException unreachable) {
        out.add(null);
      }
    }
    return out;
  }

  private static long median(List<Long> sorted) {
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static void deleteRecursively(Path root) {
    try (var walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      System.err.println("bench-masters: could not remove " + root + ": " + e);
    }
  }
}
