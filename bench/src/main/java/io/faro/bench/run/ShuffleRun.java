package io.faro.bench.run;

import static java.util.Objects.requireNonNull;

import com.sun.management.OperatingSystemMXBean;
import io.faro.bench.BenchSettings;
import io.faro.bench.cluster.WorkerProbe;
import io.faro.bench.cluster.WorkerReading;
import io.faro.bench.workload.PartitionTally;
import io.faro.bench.workload.Verification;
import io.faro.bench.workload.WorkloadCost;
import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One benchmark run through the real client library, as an engine would drive it but without one: a
 * lifecycle manager and a shuffle client in this process; placement; M map tasks pushing in
 * parallel; the commit the last map's end starts; R partitions read back in parallel and verified
 * record by record against what was written. Around each phase it reads this process's CPU time and
 * every worker's own accounting.
 */
public final class ShuffleRun {
  private static final Duration DISCOVERY_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(30);

  private final BenchSettings settings;
  private final ClientSettings client;
  private final int expectedWorkers;
  private final PrintWriter progressOut;

  /**
   * @param clientConf the client's settings, masters included ({@link BenchSettings#clientConf})
   * @param expectedWorkers alive workers to wait for before starting (0: any)
   * @param progressOut where progress lines go
   */
  public ShuffleRun(
      BenchSettings settings, FaroConf clientConf, int expectedWorkers, PrintWriter progressOut) {
    this.settings = requireNonNull(settings, "settings is null");
    this.client = ClientSettings.from(requireNonNull(clientConf, "clientConf is null"));
    this.expectedWorkers = expectedWorkers;
    this.progressOut = requireNonNull(progressOut, "progressOut is null");
  }

  /** The map side: placement, pushes and the commit. */
  private record Ingest(
      List<MapTask.Result> maps, long placementNanos, long pushNanos, long commitNanos) {}

  /** The shuffle being measured and what drives it. */
  private record Target(ShuffleClient shuffles, HostPort lifecycle, EngineShuffleId shuffle) {}

  /**
   * @throws RunFailedException when a task fails or the run passes --timeout
   */
  public RunResult run() {
    long deadline = System.nanoTime() + settings.timeout().toNanos();
    try (ClientPool pool = new ClientPool("faro-bench", client.network());
        Progress progress = new Progress(progressOut);
        LifecycleManager lifecycle =
            new LifecycleManager(
                new AppId("faro-bench-" + ProcessHandle.current().pid() + "-" + System.nanoTime()),
                client,
                pool,
                "127.0.0.1")) {
      MasterClient masters = new MasterClient(pool, client.masters(), client.masterRetryTimeout());
      WorkerProbe workers =
          new WorkerProbe(
              pool,
              WorkerProbe.discover(masters, expectedWorkers, DISCOVERY_TIMEOUT),
              STATUS_TIMEOUT);
      Target target =
          new Target(
              new ShuffleClient(pool, client),
              lifecycle.endpoint(),
              new EngineShuffleId(lifecycle.app(), 0));

      double workloadCost =
          WorkloadCost.cpuSecondsPerGb(
              settings.recordSize(), settings.data(), settings.partitions());
      List<WorkerReading> atStart = workers.read();
      long cpuAtStart = processCpuNanos();
      Ingest ingest = ingest(target, progress, deadline);
      List<WorkerReading> afterIngest = workers.read();
      long cpuAfterIngest = processCpuNanos();

      progress.phase("fetch", settings.totalRecords() * settings.recordSize());
      long fetchStart = System.nanoTime();
      List<ReadTask.Result> reads = fetch(target, progress, deadline);
      long fetchNanos = System.nanoTime() - fetchStart;
      List<WorkerReading> atEnd = workers.read();
      long cpuAtEnd = processCpuNanos();
      progress.phase("done", 0);
      lifecycle.unregisterShuffle(target.shuffle().id());

      PhaseTimes times =
          new PhaseTimes(
              ingest.placementNanos(), ingest.pushNanos(), ingest.commitNanos(), fetchNanos);
      return result(
          ingest,
          reads,
          times,
          cpuAfterIngest - cpuAtStart,
          cpuAtEnd - cpuAfterIngest,
          workloadCost,
          usage(atStart, afterIngest, atEnd));
    }
  }

  private Ingest ingest(Target target, Progress progress, long deadline) {
    progress.phase("place", 0);
    long placementStart = System.nanoTime();
    // Each blocking call runs under the run's deadline, not only under the client's own timeouts.
    TaskRunner.runOne(
        "place",
        () ->
            target
                .shuffles()
                .pushLocations(
                    target.lifecycle(), target.shuffle(), settings.maps(), settings.partitions()),
        deadline);
    long placementNanos = System.nanoTime() - placementStart;

    progress.phase("push", settings.totalRecords() * settings.recordSize());
    List<MapTask> tasks = new ArrayList<>();
    for (int m = 0; m < settings.maps(); m++) {
      tasks.add(
          new MapTask(
              settings, target.shuffles(), target.lifecycle(), target.shuffle(), m, progress));
    }
    long pushStart = System.nanoTime();
    List<MapTask.Result> maps = TaskRunner.runAll("map", settings.threads(), tasks, deadline);
    long pushEnd = maps.stream().mapToLong(MapTask.Result::finishedAt).max().orElseThrow();
    // The lifecycle manager starts the commit when the last map reports its end.
    long commitStart = maps.stream().mapToLong(MapTask.Result::mapperEndAt).max().orElseThrow();

    progress.phase("commit", 0);
    TaskRunner.runOne(
        "commit",
        () ->
            target.shuffles().fileGroups(target.lifecycle(), target.shuffle(), settings.maps(), 0),
        deadline); // waits for the commit
    long commitEnd = System.nanoTime();
    return new Ingest(maps, placementNanos, pushEnd - pushStart, commitEnd - commitStart);
  }

  private List<ReadTask.Result> fetch(Target target, Progress progress, long deadline) {
    AtomicInteger nextPartition = new AtomicInteger();
    List<ReadTask> readers = new ArrayList<>();
    for (int t = 0; t < Math.min(settings.threads(), settings.partitions()); t++) {
      readers.add(
          new ReadTask(
              target.shuffles(),
              target.lifecycle(),
              target.shuffle(),
              settings.maps(),
              settings.partitions(),
              settings.recordSize(),
              nextPartition,
              progress));
    }
    return TaskRunner.runAll("reader", settings.threads(), readers, deadline);
  }

  private RunResult result(
      Ingest ingest,
      List<ReadTask.Result> reads,
      PhaseTimes times,
      long clientIngestCpu,
      long clientFetchCpu,
      double workloadCost,
      List<WorkerUsage> workers) {
    List<MapTask.Result> maps = ingest.maps();
    PartitionTally written = new PartitionTally(settings.partitions());
    LatencySamples cuts = new LatencySamples(settings.seed());
    LatencySamples pushes = new LatencySamples(settings.seed());
    LatencySamples finishes = new LatencySamples(settings.seed());
    long stored = 0;
    long blocked = 0;
    long slowDowns = 0;
    long revives = 0;
    long backOff = 0;
    for (MapTask.Result m : maps) {
      written.addAll(m.written());
      cuts.addAll(m.cuts());
      pushes.addAll(m.pushes());
      finishes.record(m.finishNanos());
      stored += m.storedBytes();
      blocked += m.blockedNanos();
      slowDowns += m.slowDowns();
      revives += m.revives();
      backOff += m.backOffNanos();
    }
    PartitionTally read = new PartitionTally(settings.partitions());
    long fetched = 0;
    for (ReadTask.Result r : reads) {
      read.addAll(r.read());
      fetched += r.fetchedBytes();
    }
    return new RunResult(
        written.totalBytes(),
        written.totalRecords(),
        stored,
        fetched,
        times,
        pushes.summary(),
        cuts.summary(),
        finishes.summary(),
        blocked / 1e6 / maps.size(),
        slowDowns,
        revives,
        backOff / 1e6 / maps.size(),
        clientIngestCpu,
        clientFetchCpu,
        workloadCost,
        workers,
        Verification.compare(written, read));
  }

  private static List<WorkerUsage> usage(
      List<WorkerReading> start, List<WorkerReading> afterIngest, List<WorkerReading> end) {
    List<WorkerUsage> usage = new ArrayList<>();
    for (int i = 0; i < end.size(); i++) {
      usage.add(
          new WorkerUsage(
              end.get(i).workerId(),
              afterIngest.get(i).cpuNanos() - start.get(i).cpuNanos(),
              end.get(i).cpuNanos() - afterIngest.get(i).cpuNanos(),
              end.get(i)));
    }
    return usage;
  }

  /** CPU time of every thread of this process. */
  static long processCpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
