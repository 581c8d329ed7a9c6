package io.faro.bench.masters;

import io.faro.cli.LocalCluster;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.MasterStatusResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fleet form of {@code bin/faro bench-masters}: a group of masters in their own processes under
 * a {@link FleetLoad} of simulated workers and applications, measured phase by phase, each phase
 * one number of workers and one number of live shuffles (the workers only ever grow). Per phase:
 * heartbeat and slot-request latency, the leader's CPU over the phase (from its process), its heap
 * after a full collection at the phase's end (jcmd), and what the Raft log grew by (entries
 * applied, bytes of the leader's Ratis directory).
 */
final class FleetBench {
  /**
   * @param workers the numbers of simulated workers, one pass of {@code shuffles} each
   * @param shuffles the numbers of live shuffles measured at each number of workers
   * @param phase how long each phase is measured, after its ramp and {@code warmup}
   */
  record Plan(
      List<Integer> workers,
      List<Integer> shuffles,
      Duration phase,
      Duration warmup,
      FleetLoad.Settings load) {}

  private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

  private final Plan plan;
  private final Path clusterDir;
  private final ClientPool statusPool;
  private final List<HostPort> endpoints;

  FleetBench(Plan plan, LocalCluster cluster, Path clusterDir) {
    this.plan = plan;
    this.clusterDir = clusterDir;
    this.endpoints = cluster.masterEndpoints().stream().map(HostPort::parse).toList();
    this.statusPool =
        new ClientPool(
            "fleet-status",
            NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "1")));
  }

  /** Runs every phase; returns one report per phase. */
  List<Map<String, Object>> run() throws Exception {
    Secret secret =
        Secret.read(
            clusterDir.resolve("secrets").resolve("cluster.secret"),
            AuthOptions.CLUSTER_SECRET_FILE.key());
    List<Map<String, Object>> phases = new ArrayList<>();
    try (FleetLoad load = new FleetLoad(plan.load(), endpoints, secret)) {
      load.workers().leader(MasterBenchCommand.awaitLeader(statusPool, endpoints));
      for (int workers : plan.workers()) {
        long started = System.nanoTime();
        load.workers().grow(workers);
        System.out.printf(
            Locale.ROOT,
            "fleet: %d workers registered (%d answered) in %.1f s%n",
            workers,
            load.workers().registered(),
            (System.nanoTime() - started) / 1e9);
        for (int shuffles : plan.shuffles()) {
          phases.add(phase(load, workers, shuffles));
        }
      }
    } finally {
      statusPool.close();
    }
    return phases;
  }

  private Map<String, Object> phase(FleetLoad load, int workers, int shuffles) throws Exception {
    load.liveShuffles(shuffles);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    // The churn thread places or lets end; only its count says when the target is met.
    while (Math.abs(load.liveCount() - shuffles) > Math.max(1, shuffles / 20)
        && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    // The warm-up and the phase are spans of time under load, not waits for an event.
    Thread.sleep(plan.warmup().toMillis());
    int leader = MasterBenchCommand.awaitLeader(statusPool, endpoints);
    load.workers().leader(leader);
    MasterStatusResponse before = status(leader);
    long cpuBefore = cpuNanos(before.getPid());
    List<Long> masterPids = pids();
    long groupBefore = cpuNanos(masterPids);
    long selfBefore = cpuNanos(ProcessHandle.current().pid());
    long diskBefore = bytesUnder(ratisDir(leader));
    load.resetLatencies();
    long start = System.nanoTime();
    Thread.sleep(plan.phase().toMillis()); // the measured span itself
    double seconds = (System.nanoTime() - start) / 1e9;
    MasterStatusResponse after = status(leader);
    long cpuAfter = cpuNanos(after.getPid());
    long groupAfter = cpuNanos(masterPids);
    long selfAfter = cpuNanos(ProcessHandle.current().pid());
    long diskAfter = bytesUnder(ratisDir(leader));

    Map<String, Object> out = new LinkedHashMap<>();
    out.put("workers", workers);
    out.put("alive_workers", after.getAliveWorkers());
    out.put("live_shuffles_target", shuffles);
    out.put("live_shuffles", after.getShuffles());
    out.put("apps", after.getApps());
    out.put("seconds", Math.round(seconds * 10) / 10.0);
    out.put("leader_heartbeats", load.workers().leaderHeartbeats.summary());
    out.put("follower_heartbeats", load.workers().followerHeartbeats.summary());
    out.put("slot_requests", load.slotRequests.summary());
    out.put("shuffle_unregisters", load.shuffleUnregisters.summary());
    out.put("app_registrations", load.appRegistrations.summary());
    out.put("worker_registrations", load.workers().registrations.summary());
    out.put("leader_cpu_cores", cores(cpuBefore, cpuAfter, seconds));
    boolean known = groupBefore >= 0 && groupAfter >= 0 && cpuBefore >= 0 && cpuAfter >= 0;
    out.put(
        "followers_cpu_cores",
        known ? cores(groupBefore - cpuBefore, groupAfter - cpuAfter, seconds) : -1);
    out.put("load_generator_cpu_cores", cores(selfBefore, selfAfter, seconds));
    out.put("leader_heap_after_gc_mb", heapAfterGcMb(after.getPid()));
    out.put("raft_entries", after.getAppliedIndex() - before.getAppliedIndex());
    out.put(
        "raft_entries_per_s",
        Math.round((after.getAppliedIndex() - before.getAppliedIndex()) / seconds * 10) / 10.0);
    out.put("raft_dir_growth_kb", (diskAfter - diskBefore) / 1024);
    print(out);
    return out;
  }

  @SuppressWarnings("unchecked")
  private static void print(Map<String, Object> p) {
    Map<String, Object> hb = (Map<String, Object>) p.get("leader_heartbeats");
    Map<String, Object> slots = (Map<String, Object>) p.get("slot_requests");
    System.out.printf(
        Locale.ROOT,
        "fleet: %d workers (%d alive), %d live shuffles, %d apps: heartbeat p50 %s p99 %s ms (%s);"
            + " slots p50 %s p99 %s ms (%s, %s failed); leader %.3f cores (followers %.3f, this"
            + " load %.3f), heap %s MB after GC; raft %s entries/s, +%s KiB%n",
        p.get("workers"),
        p.get("alive_workers"),
        p.get("live_shuffles"),
        p.get("apps"),
        hb.get("p50_ms"),
        hb.get("p99_ms"),
        hb.get("count"),
        slots.get("p50_ms"),
        slots.get("p99_ms"),
        slots.get("count"),
        slots.get("failures"),
        (Double) p.get("leader_cpu_cores"),
        (Double) p.get("followers_cpu_cores"),
        (Double) p.get("load_generator_cpu_cores"),
        p.get("leader_heap_after_gc_mb"),
        p.get("raft_entries_per_s"),
        p.get("raft_dir_growth_kb"));
  }

  private MasterStatusResponse status(int master) {
    MasterStatusResponse s = MasterBenchCommand.statuses(statusPool, endpoints).get(master);
    if (s == null) {
      throw new IllegalStateException("master " + endpoints.get(master) + " did not answer");
    }
    return s;
  }

  private Path ratisDir(int master) {
    // A lone master keeps the layout "master"; a group's are master-1..master-N.
    String name = endpoints.size() == 1 ? "master" : "master-" + (master + 1);
    return clusterDir.resolve(name).resolve("ratis");
  }

  /** Cores used on average between two CPU times; -1 when either is unknown. */
  private static double cores(long beforeNanos, long afterNanos, double seconds) {
    return beforeNanos < 0 || afterNanos < 0
        ? -1
        : Math.round((afterNanos - beforeNanos) / 1e9 / seconds * 1000) / 1000.0;
  }

  /** The masters' process ids, as they report them. */
  private List<Long> pids() {
    return MasterBenchCommand.statuses(statusPool, endpoints).stream()
        .filter(s -> s != null)
        .map(MasterStatusResponse::getPid)
        .toList();
  }

  /** CPU time of the processes {@code pids} so far, or -1 when one is unknown. */
  private static long cpuNanos(List<Long> pids) {
    long sum = 0;
    for (long pid : pids) {
      long one = cpuNanos(pid);
      if (one < 0) {
        return -1;
      }
      sum += one;
    }
    return sum;
  }

  /** CPU time of process {@code pid} so far, or -1 when the platform does not say. */
  private static long cpuNanos(long pid) {
    return ProcessHandle.of(pid)
        .flatMap(p -> p.info().totalCpuDuration())
        .map(Duration::toNanos)
        .orElse(-1L);
  }

  /** The heap process {@code pid} uses after a full collection (jcmd), or -1 if unknown. */
  private static long heapAfterGcMb(long pid) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    if (!Files.isExecutable(jcmd)) {
      return -1;
    }
    run(jcmd.toString(), Long.toString(pid), "GC.run");
    String info = run(jcmd.toString(), Long.toString(pid), "GC.heap_info");
    Matcher m = HEAP_USED.matcher(info);
    return m.find() ? Long.parseLong(m.group(1)) / 1024 : -1;
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
    return out;
  }

  private static long bytesUnder(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (var walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile)
          .mapToLong(
              f -> {
                try {
                  return Files.size(f);
                } catch (IOException gone) {
                  return 0; // a log segment Ratis removed meanwhile
                }
              })
          .sum();
    }
  }
}
