package io.faro.bench.jmh;

import io.faro.metrics.FaroMetrics;
import io.faro.metrics.Latency;
import io.faro.metrics.RequestMetrics;
import io.faro.proto.MessageType;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * What the metrics cost on the hot path and per scrape: one request observed as a push port does
 * (arrival, answer: two counters and a latency), one flush timed, and one whole scrape of a
 * worker-sized registry (plus the JVM's metrics) written in the text format. The hot-path figures
 * times the events per second a worker sees bound the metrics' share of its CPU; bench/
 * metrics-cost.sh measures whole pushes with them on and off.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MetricsBenchmark {
  private RequestMetrics requests;
  private Latency flushes;
  private FaroMetrics process;

  @Setup
  public void setUp() {
    FaroMetrics metrics = FaroMetrics.standalone();
    requests =
        new RequestMetrics(metrics, "faro_worker", "push", List.of(MessageType.PUSH_REQUEST));
    flushes = metrics.latency("faro_worker_flush_seconds", "Flushes.", "disk", "/d1");
    // A worker's registry: its requests on three ports, 12 disks' series, the JVM's metrics.
    process = FaroMetrics.forProcess();
    new RequestMetrics(
        process,
        "faro_worker",
        "rpc",
        List.of(MessageType.RESERVE_SLOTS_REQUEST, MessageType.COMMIT_FILES_REQUEST));
    new RequestMetrics(process, "faro_worker", "push", List.of(MessageType.PUSH_REQUEST));
    new RequestMetrics(
        process,
        "faro_worker",
        "fetch",
        List.of(MessageType.OPEN_STREAM_REQUEST, MessageType.FETCH_CHUNK_REQUEST));
    // 12 disks with a worker's 15 series each: 4 counters, 4 gauges, 3 states, 3 queues and
    // open partitions as gauges, 1 latency. (The worker's own gauges that walk its partitions
    // read them once per scrape at most; an empty store here.)
    for (int d = 0; d < 12; d++) {
      String[] labels = {"disk", "/data" + d, "tier", "hdd"};
      for (String c :
          new String[] {"written_bytes", "write_seconds", "read_bytes", "read_seconds"}) {
        process.counter("faro_worker_disk_" + c, "A disk counter.", labels).inc(d);
      }
      for (String g :
          new String[] {
            "used_bytes", "usable_bytes", "open_partitions", "queued_reads", "queued_flushes"
          }) {
        process.gauge("faro_worker_disk_" + g, "A disk gauge.", () -> 42, labels);
      }
      for (String state : new String[] {"healthy", "full", "broken"}) {
        process.gauge(
            "faro_worker_disk_state",
            "A disk's state.",
            () -> 1,
            "disk",
            "/data" + d,
            "tier",
            "hdd",
            "state",
            state);
      }
      process.latency("faro_worker_flush_seconds", "Flushes.", labels).record(1_000_000);
    }
  }

  /** One push request observed: what a push port adds to each request. */
  @Benchmark
  @Threads(2)
  public void observeOneRequest() {
    long arrival = requests.arrived(MessageType.PUSH_REQUEST);
    requests.answered(MessageType.PUSH_REQUEST, arrival, false);
  }

  /** One flush timed. */
  @Benchmark
  @Threads(2)
  public void timeOneFlush() {
    flushes.record(1_234_567);
  }

  /** One scrape of a worker-sized registry, the JVM's metrics included, as text. */
  @Benchmark
  public int scrapeOnce() {
    return process.text().length();
  }
}
