package io.faro.worker.server;

import static java.util.Objects.requireNonNull;

import io.faro.metrics.HttpEndpoint.Answer;
import io.faro.metrics.HttpEndpoint.BadRequest;
import io.faro.metrics.HttpEndpoint.Page;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.status.WorkerStatus;
import io.faro.worker.status.WorkerStatusSampler;
import io.faro.worker.storage.Disk;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The worker's JSON API under {@code /api/v1/}, on its HTTP port: {@code disks}, {@code shuffles}
 * (pages of at most 10,000, 1,000 by default: {@code ?limit=}, {@code ?after=APP/N}) and {@code
 * memory}. Read from in-memory state only, like the metrics.
 */
final class WorkerApi {
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
      row.put("open_partitions", store.openPartitions(d.index()));
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
    int limit = DEFAULT_PAGE;
    if (query.containsKey("limit")) {
      try {
        limit = Integer.parseInt(query.get("limit"));
      } catch (NumberFormatException e) {
        limit = -1;
      }
      if (limit < 1 || limit > MAX_PAGE) {
        throw new BadRequest(
            "limit must be a number from 1 to " + MAX_PAGE + ", not " + query.get("limit"));
      }
    }
    String after = query.getOrDefault("after", "");
    List<PartitionStore.ShuffleSummary> all = new ArrayList<>(store.summaries());
    all.sort(
        Comparator.comparing((PartitionStore.ShuffleSummary s) -> s.id().app().value())
            .thenComparingInt(s -> s.id().shuffle()));
    List<Map<String, Object>> page = new ArrayList<>();
    String next = "";
    for (PartitionStore.ShuffleSummary s : all) {
      String id = s.id().app().value() + "/" + s.id().shuffle();
      if (!after.isEmpty() && !isAfter(s, after)) {
        continue;
      }
      if (page.size() == limit) {
        next = (String) page.get(page.size() - 1).get("id");
        break;
      }
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("id", id);
      row.put("app", s.id().app().value());
      row.put("shuffle", s.id().shuffle());
      row.put("locations", s.locations());
      row.put("open_locations", s.openLocations());
      row.put("restored_locations", s.restoredLocations());
      row.put("committing", s.committing());
      page.add(row);
    }
    Map<String, Object> out = header();
    out.put("total_shuffles", all.size());
    out.put("shuffles", page);
    out.put("next_after", next);
    return Answer.json(out);
  }

  /** Whether {@code s} sorts after the shuffle id {@code after} ({@code APP/N}). */
  private static boolean isAfter(PartitionStore.ShuffleSummary s, String after) {
    int slash = after.lastIndexOf('/');
    int shuffle;
    try {
      shuffle = Integer.parseInt(after.substring(slash + 1));
    } catch (NumberFormatException | IndexOutOfBoundsException e) {
      throw new BadRequest("after must be a shuffle id APP/N, not " + after);
    }
    String app = slash < 0 ? "" : after.substring(0, slash);
    int c = s.id().app().value().compareTo(app);
    return c > 0 || (c == 0 && s.id().shuffle() > shuffle);
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
