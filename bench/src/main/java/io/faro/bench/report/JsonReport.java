package io.faro.bench.report;

import io.faro.bench.BenchSettings;
import io.faro.bench.cluster.ClusterTarget;
import io.faro.bench.run.PhaseTimes;
import io.faro.bench.run.RunResult;
import io.faro.bench.run.WorkerUsage;
import io.faro.common.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The report as JSON. Keys are snake_case and stable: tools compare runs by them, so a key is never
 * renamed or given another unit; new figures get new keys. The headline figures are at the top
 * level; settings, client settings, machine and per-worker figures are nested.
 */
public final class JsonReport {
  /** Bumped only if an existing key changes meaning. */
  static final int FORMAT_VERSION = 1;

  private JsonReport() {}

  public static String write(BenchReport report) {
    return Json.write(toMap(report));
  }

  static Map<String, Object> toMap(BenchReport report) {
    RunResult r = report.result();
    PhaseTimes t = r.times();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("format_version", FORMAT_VERSION);
    out.put("date", report.date().toString());
    out.put("verified", r.verification().verified());
    out.put("mismatched_partitions", r.verification().mismatchedPartitions());
    out.put("verification_errors", r.verification().examples());
    out.put("bytes", r.bytes());
    out.put("records", r.records());
    out.put("stored_bytes", r.storedBytes());
    out.put("fetched_bytes", r.fetchedBytes());
    out.put("compression_ratio", round(report.compressionRatio()));
    out.put("push_mb_per_s", round(report.pushMbPerSecond()));
    out.put("push_and_commit_mb_per_s", round(report.pushAndCommitMbPerSecond()));
    out.put("fetch_mb_per_s", round(report.fetchMbPerSecond()));
    out.put("placement_ms", millis(t.placementNanos()));
    out.put("push_ms", millis(t.pushNanos()));
    out.put("commit_ms", millis(t.commitNanos()));
    out.put("fetch_ms", millis(t.fetchNanos()));
    out.put("push_latency_p50_ms", round(r.pushLatency().p50Ms()));
    out.put("push_latency_p99_ms", round(r.pushLatency().p99Ms()));
    out.put("push_latency_samples", r.pushLatency().count());
    out.put(
        "push_latency_method",
        "time from sending each push request to its answer, every request of every " + "map task");
    out.put("batch_cut_p50_ms", round(r.batchCuts().p50Ms()));
    out.put("batch_cut_p99_ms", round(r.batchCuts().p99Ms()));
    out.put("map_finish_p50_ms", round(r.mapFinishes().p50Ms()));
    out.put("map_finish_p99_ms", round(r.mapFinishes().p99Ms()));
    out.put("map_blocked_ms_mean", round(r.mapBlockedMillisMean()));
    out.put("map_slow_downs", r.mapSlowDowns());
    out.put("map_revives", r.mapRevives());
    out.put("map_back_off_ms_mean", round(r.mapBackOffMillisMean()));
    out.put("worker_cpu_s_per_gb", round(report.workerCpuSecondsPerGb()));
    out.put("worker_ingest_cpu_s_per_gb", round(report.workerIngestCpuSecondsPerGb()));
    out.put("worker_fetch_cpu_s_per_gb", round(report.workerFetchCpuSecondsPerGb()));
    out.put("client_cpu_s_per_gb", round(report.clientCpuSecondsPerGb()));
    out.put("client_ingest_cpu_s_per_gb", round(report.clientIngestCpuSecondsPerGb()));
    out.put("client_fetch_cpu_s_per_gb", round(report.clientFetchCpuSecondsPerGb()));
    out.put("client_workload_cpu_s_per_gb", round(r.workloadCpuSecondsPerGb()));
    out.put("worker_peak_rss_mb", round(report.workerPeakRssMb()));
    out.put("worker_peak_direct_mb", round(report.workerPeakDirectMb()));
    out.put("worker_peak_memory_budget_mb", round(report.workerPeakBudgetMb()));
    out.put("worker_memory_pause_mb", round(report.workerPauseMb()));
    out.put(
        "units",
        "MB = 2^20 bytes, GB = 2^30 bytes; throughput and per-GB figures count record bytes "
            + "before compression; worker peaks are since each worker process started");
    out.put("settings", settings(report.settings(), report.cluster()));
    out.put("client_settings", new TreeMap<>(report.clientConf()));
    out.put("machine", machine(report.machine()));
    out.put("workers", workers(r.workers()));
    return out;
  }

  private static Map<String, Object> settings(BenchSettings s, String cluster) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("cluster", cluster);
    if (s.target() instanceof ClusterTarget.Local local) {
      out.put("local_workers", local.workers());
    }
    out.put("maps", s.maps());
    out.put("partitions", s.partitions());
    out.put("total_bytes", s.totalBytes());
    out.put("warmup_bytes", s.warmupBytes());
    out.put("record_size", s.recordSize());
    out.put("data", s.data().name().toLowerCase(Locale.ROOT));
    out.put("codec", s.codec().name().toLowerCase(Locale.ROOT));
    out.put("threads", s.threads());
    out.put("seed", s.seed());
    s.confFile().ifPresent(f -> out.put("conf_file", f.toString()));
    return out;
  }

  /** The machine a run measured, as every bench report gives it. */
  public static Map<String, Object> machine(MachineFacts m) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("cores", m.cores());
    out.put("memory_mb", Math.round(m.memoryBytes() / BenchReport.MB));
    out.put("cpu_model", m.cpuModel());
    out.put("os", m.os());
    out.put("arch", m.arch());
    out.put("java_version", m.javaVersion());
    out.put("load_average_at_start", round(m.loadAverage()));
    return out;
  }

  private static List<Object> workers(List<WorkerUsage> workers) {
    List<Object> out = new ArrayList<>();
    for (WorkerUsage w : workers) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("worker_id", w.workerId());
      entry.put("disk_io_modes", w.end().diskIoModes());
      entry.put("ingest_cpu_s", round(w.ingestCpuNanos() / 1e9));
      entry.put("fetch_cpu_s", round(w.fetchCpuNanos() / 1e9));
      entry.put("rss_mb", round(w.end().rssBytes() / BenchReport.MB));
      entry.put("peak_rss_mb", round(w.end().peakRssBytes() / BenchReport.MB));
      entry.put("direct_mb", round(w.end().directBytes() / BenchReport.MB));
      entry.put("peak_direct_mb", round(w.end().peakDirectBytes() / BenchReport.MB));
      entry.put("peak_memory_budget_mb", round(w.end().peakBudgetBytes() / BenchReport.MB));
      entry.put("memory_pauses", w.end().pauses());
      entry.put("memory_paused_ms", w.end().pausedMs());
      entry.put("heap_used_mb", round(w.end().heapUsedBytes() / BenchReport.MB));
      out.add(entry);
    }
    return out;
  }

  private static double millis(long nanos) {
    return round(nanos / 1e6);
  }

  /** Three decimals: enough for every figure here, and stable diffs between reports. */
  public static double round(double value) {
    return Math.round(value * 1000) / 1000.0;
  }
}
