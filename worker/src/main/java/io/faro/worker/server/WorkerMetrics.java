package io.faro.worker.server;

import io.faro.common.network.TransportServer;
import io.faro.metrics.FaroMetrics;
import io.faro.metrics.Latency;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.TrafficCounters;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskHealth;
import io.netty.util.internal.PlatformDependent;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The worker's metrics besides its requests' (which {@link io.faro.metrics.RequestMetrics} counts
 * on each port): what went through it, its disks, its memory budget and what it holds. Nearly all
 * are read at scrape time from the counters the worker keeps anyway; the one thing timed here is
 * each disk write (a flush), through {@link Disk#onWrite}, unless faro.worker.metrics.enabled is
 * false.
 *
 * <p>Labels: {@code disk} (the disk's directory, as in faro.worker.dirs), {@code tier}, {@code
 * port} (rpc, push, fetch), {@code state}: bounded sets, known at start.
 */
final class WorkerMetrics {
  private static final double NANOS_PER_SECOND = TimeUnit.SECONDS.toNanos(1);

  private WorkerMetrics() {}

  static void register(
      FaroMetrics metrics,
      PartitionStore store,
      MemoryBudget budget,
      Map<String, TransportServer> servers,
      boolean timeFlushes) {
    traffic(metrics, store.counters());
    holdings(metrics, store);
    memory(metrics, budget);
    servers.forEach(
        (port, server) ->
            metrics.gauge(
                "faro_worker_connections",
                "Connections open now, by port.",
                server::connections,
                "port",
                port));
    // One pass over the store per scrape at most, not one per disk.
    Supplier<int[]> open = recent(store::openPartitionsByDisk);
    for (Disk disk : store.disks().all()) {
      disk(metrics, disk, open, timeFlushes);
    }
  }

  private static void traffic(FaroMetrics metrics, TrafficCounters c) {
    metrics.counter(
        "faro_worker_pushed_bytes",
        "Bytes taken into partitions here: pushed by map tasks, and forwarded by primaries to "
            + "their replicas here.",
        c::appendedBytes);
    metrics.counter(
        "faro_worker_replicated_bytes",
        "Bytes this worker forwarded to the replicas of its partitions.",
        c::forwardedBytes);
    metrics.counter(
        "faro_worker_fetched_bytes", "Bytes of chunks served to reducers.", c::fetchedBytes);
    metrics.counter("faro_worker_fetched_chunks", "Chunks served to reducers.", c::fetchedChunks);
    metrics.counter(
        "faro_worker_fetch_left_out_bytes",
        "Bytes of fetched chunks left out of the answers to sub-reads of skewed partitions: "
            + "batches of other maps than the sub-read asked for.",
        c::leftOutBytes);
    metrics.counter(
        "faro_worker_split_answers",
        "Pushed parts answered SOFT_SPLIT or SPLIT (the partition moves on).",
        c::splitAnswers);
    metrics.counter(
        "faro_worker_full_answers",
        "First parts of idle locations answered WORKER_FULL: this worker held"
            + " faro.worker.max.written.partitions locations that received data, so the partition"
            + " moved to another worker.",
        c::fullAnswers);
    metrics.counter(
        "faro_worker_committed_files",
        "Partition files with data committed since start.",
        c::committedFiles);
    metrics.counter("faro_worker_committed_bytes", "Their bytes.", c::committedBytes);
  }

  private static void holdings(FaroMetrics metrics, PartitionStore store) {
    metrics.gauge(
        "faro_worker_partitions",
        "Partition locations held now, of every shuffle, open or committed, written or idle"
            + " (faro.worker.max.partitions).",
        store::heldLocations);
    metrics.gauge(
        "faro_worker_written_partitions",
        "Of those, the ones that received data (faro.worker.max.written.partitions).",
        store::writtenLocations);
    metrics.gauge(
        "faro_worker_shuffles", "Shuffles with locations here.", () -> store.shuffles().size());
    metrics.gauge(
        "faro_worker_apps",
        "Applications with shuffles here.",
        () -> store.shuffles().stream().map(s -> s.app()).distinct().count());
  }

  private static void memory(FaroMetrics metrics, MemoryBudget budget) {
    metrics.gauge(
        "faro_worker_memory_budget_used_bytes",
        "Pushed data held in memory now, charged to faro.worker.memory.budget.",
        budget::used);
    metrics.gauge(
        "faro_worker_memory_budget_pause_bytes",
        "The mark at which push connections pause (faro.worker.memory.pause.percent of the "
            + "budget).",
        budget::pauseAt);
    metrics.gauge(
        "faro_worker_memory_paused",
        "1 while push connections are paused for memory.",
        () -> budget.isPaused() ? 1 : 0);
    metrics.counter("faro_worker_memory_pauses", "Times push connections paused.", budget::pauses);
    metrics.counter(
        "faro_worker_memory_paused_seconds",
        "Time push connections spent paused.",
        () -> budget.pausedNanos() / NANOS_PER_SECOND);
    metrics.gauge(
        "faro_worker_netty_direct_memory_bytes",
        "Direct memory Netty's allocator holds (-1 when Netty does not count it).",
        PlatformDependent::usedDirectMemory);
  }

  /** {@code read}, read again only when its last value is older than a second. */
  static <T> Supplier<T> recent(Supplier<T> read) {
    return new Supplier<>() {
      private T value;
      private long readAt;

      @Override
      public synchronized T get() {
        long now = System.nanoTime();
        if (value == null || now - readAt > TimeUnit.SECONDS.toNanos(1)) {
          value = read.get();
          readAt = now;
        }
        return value;
      }
    };
  }

  private static void disk(
      FaroMetrics metrics, Disk disk, Supplier<int[]> open, boolean timeFlushes) {
    String[] labels = {"disk", disk.root().toString(), "tier", disk.tier().configName()};
    diskTraffic(metrics, disk, labels);
    diskReads(metrics, disk, labels);
    if (timeFlushes) {
      Latency flushes =
          metrics.latency(
              "faro_worker_flush_seconds",
              "Time of one write of buffered partition data to a disk (a flush).",
              labels);
      disk.onWrite(flushes::record);
    }
    diskState(metrics, disk, open, labels);
  }

  /** What the disk wrote and read, and the time it took. */
  private static void diskTraffic(FaroMetrics metrics, Disk disk, String[] labels) {
    metrics.counter(
        "faro_worker_disk_written_bytes",
        "Bytes written to the disk's partition files.",
        () -> disk.ioTimes()[0],
        labels);
    metrics.counter(
        "faro_worker_disk_write_seconds",
        "Time spent writing them.",
        () -> disk.ioTimes()[1] / NANOS_PER_SECOND,
        labels);
    metrics.counter(
        "faro_worker_disk_read_bytes",
        "Bytes read from the disk's partition files for reducers.",
        () -> disk.ioTimes()[2],
        labels);
    metrics.counter(
        "faro_worker_disk_read_seconds",
        "Time spent reading them.",
        () -> disk.ioTimes()[3] / NANOS_PER_SECOND,
        labels);
  }

  /** What read-ahead and the runs layout's reads and writes did on the disk. */
  private static void diskReads(FaroMetrics metrics, Disk disk, String[] labels) {
    metrics.counter(
        "faro_worker_disk_read_ahead_bytes",
        "Bytes of partition files read into the page cache ahead of reducers"
            + " (faro.worker.read.ahead.files).",
        () -> disk.reader().warmedBytes(),
        labels);
    metrics.counter(
        "faro_worker_disk_read_ahead_resident_bytes",
        "Bytes read-ahead found in the page cache already, with nothing to read.",
        () -> disk.reader().warmResidentBytes(),
        labels);
    metrics.counter(
        "faro_worker_disk_fetch_zero_copy_bytes",
        "Bytes of chunks sent from their files because every page was in the page cache"
            + " (faro.worker.fetch.zero.copy): not read into the worker's buffers.",
        () -> disk.reader().regionBytes(),
        labels);
    metrics.counter(
        "faro_worker_disk_read_ahead_seconds",
        "Time the disk's reader threads spent on read-ahead.",
        () -> disk.reader().warmNanos() / NANOS_PER_SECOND,
        labels);
    metrics.counter(
        "faro_worker_disk_runs_written",
        "Runs written to the disk (faro.worker.tier.TIER.layout runs): each one write of what a"
            + " shuffle's partitions there buffered.",
        disk::runsWritten,
        labels);
    metrics.counter(
        "faro_worker_disk_read_around",
        "Reads of a run that read faro.worker.runs.read.around bytes from their piece's start.",
        () -> disk.reader().readsAround(),
        labels);
    metrics.counter(
        "faro_worker_disk_read_around_bytes",
        "Bytes those reads read beyond the pieces asked for (the next partitions').",
        () -> disk.reader().readAroundBytes(),
        labels);
  }

  /** The disk's space, state, open partitions and queues now. */
  private static void diskState(
      FaroMetrics metrics, Disk disk, Supplier<int[]> open, String[] labels) {
    metrics.gauge(
        "faro_worker_disk_used_bytes",
        "Bytes of Faro's files on the disk.",
        disk::usedBytes,
        labels);
    metrics.gauge(
        "faro_worker_disk_usable_bytes",
        "Bytes the worker may still write there, as the last disk check found.",
        () -> disk.health().usableBytes(),
        labels);
    for (DiskHealth.State state : DiskHealth.State.values()) {
      metrics.gauge(
          "faro_worker_disk_state",
          "1 for the disk's state (healthy, full, broken), 0 for the others.",
          () -> disk.state() == state ? 1 : 0,
          "disk",
          disk.root().toString(),
          "tier",
          disk.tier().configName(),
          "state",
          state.name().toLowerCase(Locale.ROOT));
    }
    metrics.gauge(
        "faro_worker_disk_open_partitions",
        "Partition locations on the disk that still take data.",
        () -> open.get()[disk.index()],
        labels);
    metrics.gauge(
        "faro_worker_disk_queued_reads",
        "Chunk reads waiting for the disk.",
        () -> disk.reader().queuedReads(),
        labels);
    metrics.gauge(
        "faro_worker_disk_queued_flushes",
        "Flushes waiting for the disk.",
        () -> disk.flusher().queuedTasks(),
        labels);
  }
}
