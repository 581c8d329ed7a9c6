package io.faro.worker.server;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.ShuffleId;
import io.faro.metrics.HttpEndpoint;
import io.faro.metrics.HttpEndpoint.Answer;
import io.faro.metrics.HttpEndpoint.BadRequest;
import io.faro.metrics.HttpEndpoint.Page;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.ShuffleSummary;
import io.faro.worker.status.WorkerStatus;
import io.faro.worker.status.WorkerStatusSampler;
import io.faro.worker.storage.Disk;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The worker's JSON API under {@code /api/v1/}, on its HTTP port: {@code disks}, {@code shuffles}
 * (pages of at most 10,000, 1,000 by default: {@code ?limit=}, {@code ?after=APP/N}) and {@code
 * memory}. Read from in-memory state only, like the metrics. With authentication on, {@code
 * shuffles} (it names applications) needs the admin token ({@link #OPERATORS}).
 */
final class WorkerApi {
  /** The pages that list applications' shuffles: the admin token's, with authentication on. */
  static final Set<String> OPERATORS = Set.of("/api/v1/shuffles");

  private static final int DEFAULT_PAGE = 1_000;
  private static final int MAX_PAGE = 10_000;

  private final Supplier<String> workerId;
  private final PartitionStore store;
  private final WorkerStatusSampler status;

  WorkerApi(Supplier<String> workerId, PartitionStore store, WorkerStatusSampler status) {
    this.workerId = requireNonNull(workerId, "workerId is null");
    this.store = requireNonNull(store, "store is null");
    this.status = requireNonNull(status, "status is null");
  }

  Map<String, Page> pages() {
    return Map.of(
        "/api/v1/disks", Page.of(this::disks),
        "/api/v1/shuffles", this::shuffles,
        "/api/v1/memory", Page.of(this::memory));
  }

  private Map<String, Object> header() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("worker_id", workerId.get());
    return out;
  }

  private Answer disks() {
    List<Map<String, Object>> disks = new ArrayList<>();
    int[] open = store.openPartitionsByDisk();
    for (Disk d : store.disks().all()) {
      long[] io = d.ioTimes();
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("index", d.index());
      row.put("path", d.root().toString());
      row.put("tier", d.tier().configName());
      row.put("io_mode", d.ioMode().name().toLowerCase(Locale.ROOT));
      row.put("state", d.state().name().toLowerCase(Locale.ROOT));
      row.put("health", d.health().describe());
      row.put("usable_bytes", d.health().usableBytes());
      row.put("used_bytes", d.usedBytes());
      row.put("open_partitions", open[d.index()]);
      row.put("written_bytes", io[0]);
      row.put("write_ms", TimeUnit.NANOSECONDS.toMillis(io[1]));
      row.put("read_bytes", io[2]);
      row.put("read_ms", TimeUnit.NANOSECONDS.toMillis(io[3]));
      row.put("recent_flush_ms_per_mib", d.reportedFlushMsPerMiB());
      row.put("recent_read_ms_per_mib", d.reportedReadMsPerMiB());
      row.put("queued_flushes", d.flusher().queuedTasks());
      row.put("queued_reads", d.reader().queuedReads());
      disks.add(row);
    }
    Map<String, Object> out = header();
    out.put("disks", disks);
    return Answer.json(out);
  }

  private Answer shuffles(Map<String, String> query) {
    int limit = HttpEndpoint.limit(query, DEFAULT_PAGE, MAX_PAGE);
    String after = query.getOrDefault("after", "");
    ShuffleId cursor;
    try {
      cursor = after.isEmpty() ? null : ShuffleId.parseKey(after);
    } catch (IllegalArgumentException e) {
      throw new BadRequest("after is not a shuffle id here (" + e.getMessage() + ")");
    }
    SortedMap<ShuffleId, ShuffleSummary> all = new TreeMap<>(ShuffleId.ORDER);
    store.summaries().forEach(summary -> all.put(summary.id(), summary));
    Map<String, Object> out = header();
    HttpEndpoint.page(
        all,
        cursor,
        limit,
        "shuffles",
        summary -> {
          Map<String, Object> row = new LinkedHashMap<>();
          row.put("id", summary.id().key());
          row.put("app", summary.id().app().value());
          row.put("shuffle", summary.id().shuffle());
          row.put("locations", summary.locations());
          row.put("open_locations", summary.openLocations());
          row.put("restored_locations", summary.restoredLocations());
          row.put("committing", summary.committing());
          return row;
        },
        out);
    return Answer.json(out);
  }

  private Answer memory() {
    WorkerStatus s = status.status();
    Map<String, Object> out = header();
    out.put("memory_budget_used_bytes", s.memoryBudgetUsedBytes());
    out.put("peak_memory_budget_used_bytes", s.peakMemoryBudgetUsedBytes());
    out.put("memory_pause_bytes", s.memoryPauseBytes());
    out.put("memory_pauses", s.memoryPauses());
    out.put("memory_paused_ms", s.memoryPausedMs());
    out.put("direct_memory_bytes", s.directMemoryBytes());
    out.put("peak_direct_memory_bytes", s.peakDirectMemoryBytes());
    out.put("heap_used_bytes", s.heapUsedBytes());
    out.put("heap_max_bytes", s.heapMaxBytes());
    out.put("rss_bytes", s.rssBytes());
    out.put("peak_rss_bytes", s.peakRssBytes());
    out.put("process_cpu_ms", TimeUnit.NANOSECONDS.toMillis(s.processCpuNanos()));
    out.put("uptime_ms", s.uptimeMs());
    return Answer.json(out);
  }
}
