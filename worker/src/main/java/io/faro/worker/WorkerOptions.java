package io.faro.worker;

import static io.faro.common.config.ConfigOption.booleanOption;
import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.enumOption;
import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.listOption;
import static io.faro.common.config.ConfigOption.sizeOption;
import static io.faro.common.config.ConfigOption.stringOption;

import io.faro.common.config.ConfigOption;
import io.faro.common.id.DiskTier;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.IoMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Every setting of the worker, each with its default, unit, doc and validator; {@link
 * WorkerSettings} are the typed values built from them. {@link #ALL} feeds docs/configuration.md.
 *
 * <p>Over 400 lines, knowingly: a list of declarations, one per key (docs/configuration.md is
 * generated from them). Each doc says what the key sets, its unit and why; measurements are in
 * docs/benchmarks.md, the checks that tie settings together in {@link WorkerSettings} and the
 * memory arithmetic in {@link MemorySizing}.
 */
public final class WorkerOptions {
  public static final ConfigOption<String> HOST =
      stringOption(
          "faro.worker.host",
          "",
          "Host name or address the worker advertises to the masters and clients; empty means "
              + "the local host name.");
  public static final ConfigOption<String> BIND_HOST =
      stringOption(
          "faro.worker.bind.host",
          "0.0.0.0",
          "Address the worker's servers listen on: RPC, push, fetch and HTTP.");
  public static final ConfigOption<String> ID =
      stringOption(
          "faro.worker.id",
          "",
          "Stable identity of this worker; empty means host:rpcPort. Keep it stable across "
              + "restarts so the masters recognise the worker.");
  public static final ConfigOption<Integer> RPC_PORT =
      intOption(
          "faro.worker.rpc.port",
          9100,
          0,
          65535,
          "port",
          "Port of control RPCs (reserve slots, commit files); 0 picks a free one.");
  public static final ConfigOption<Integer> PUSH_PORT =
      intOption(
          "faro.worker.push.port",
          9101,
          0,
          65535,
          "port",
          "Port that map tasks push batches to; 0 picks a free one. Separate from the others "
              + "so that push back-pressure never stalls control or fetch traffic.");
  public static final ConfigOption<Integer> FETCH_PORT =
      intOption(
          "faro.worker.fetch.port",
          9102,
          0,
          65535,
          "port",
          "Port that reducers fetch chunks from; 0 picks a free one.");
  public static final ConfigOption<Integer> HTTP_PORT =
      intOption(
          "faro.worker.http.port",
          9103,
          -1,
          65535,
          "port",
          "Port of the worker's HTTP pages: /metrics (Prometheus text format) and the JSON API "
              + "under /api/v1/. 0 picks a free one; -1 turns the pages off.");
  public static final ConfigOption<Boolean> METRICS_ENABLED =
      booleanOption(
          "faro.worker.metrics.enabled",
          true,
          "Whether the worker counts and times each request and each flush for /metrics "
              + "(faro_worker_requests_total, faro_worker_request_seconds, "
              + "faro_worker_flush_seconds); false leaves out only those, the traffic, disk, "
              + "memory and holdings figures stay.");
  public static final ConfigOption<List<DiskDir>> DIRS =
      listOption(
          "faro.worker.dirs",
          "",
          DiskDir::parse,
          true,
          "path:tier with tier one of " + DiskTier.allowed(),
          "The worker's disks, one directory per disk, each with its tier, e.g. "
              + "/data1/faro:ssd,/data2/faro:hdd. Required. The position in this list is the "
              + "disk index the masters place partitions by: keep the order stable. An optional "
              + "third field caps what Faro keeps on that disk (a disk shared with HDFS), e.g. "
              + "/data1/faro:hdd:2t.");
  public static final ConfigOption<String> META_DIR =
      stringOption(
          "faro.worker.meta.dir",
          "",
          "Directory of the worker's metadata store (RocksDB): the committed partition files a "
              + "restarted worker serves again. Empty means .faro-meta in the first of "
              + "faro.worker.dirs. Losing it loses the worker's committed shuffle data, never "
              + "correctness.");
  public static final ConfigOption<Long> FLUSH_BUFFER_SIZE =
      sizeOption(
          "faro.worker.flush.buffer.size",
          "256k",
          4 * 1024,
          256L << 20,
          "Bytes one partition buffers in memory before they are handed to its disk's flusher. "
              + "Larger means fewer, bigger sequential writes and more memory per partition.");
  public static final long CHUNK_SIZE_MIN = 1024;
  public static final long CHUNK_SIZE_MAX = 1L << 30;
  public static final ConfigOption<Long> CHUNK_SIZE =
      sizeOption(
          "faro.worker.chunk.size",
          "8m",
          CHUNK_SIZE_MIN,
          CHUNK_SIZE_MAX,
          "Target size of the chunks a partition file is cut into; a reducer fetches one chunk "
              + "per request, and a chunk ends with the pushed part that makes it reach this "
              + "size. A replica is cut by its primary's chunk size, so both copies share chunk "
              + "boundaries.");
  public static final ConfigOption<Boolean> COMMIT_SYNC =
      booleanOption(
          "faro.worker.commit.sync",
          false,
          "Whether a commit forces (fsyncs) each partition file and the worker's record of it "
              + "before it answers. With false, a worker process that dies loses nothing (the "
              + "kernel still writes its pages back); only a machine that crashes before "
              + "write-back can lose files, which the restarted worker detects and drops, and "
              + "Spark runs their maps again (docs/failures.md, \"Restart\"). true costs an fsync "
              + "per file per commit.");
  public static final ConfigOption<IoMode> IO_MODE =
      enumOption(
          "faro.worker.io.mode",
          IoMode.AUTO,
          IoMode.class,
          "How partition files are written and read. direct: O_DIRECT from aligned buffers, "
              + "bypassing the page cache (a file system that refuses O_DIRECT stops the "
              + "worker). buffered: through the page cache. auto: direct on nvme disks whose "
              + "file system takes it, buffered on ssd and hdd disks, where the page cache "
              + "serves reads soon after writes and write-back merges writes. Chunks are read "
              + "on each disk's reader threads either way.");
  public static final ConfigOption<Long> IO_READ_BUFFER_PER_DISK =
      sizeOption(
          "faro.worker.io.read.buffer.per.disk",
          "64m",
          2L << 20,
          1L << 40,
          "Direct memory per disk that holds chunks read for fetches until they are sent; at "
              + "least 2 x faro.worker.chunk.size + 2m. While all of it is lent out a read "
              + "waits, up to a quarter of faro.network.request.timeout, then fails with a "
              + "retryable TIMEOUT. Counted with faro.worker.memory.budget against 90% of the "
              + "JVM's direct memory.");
  public static final ConfigOption<Integer> READ_AHEAD_FILES =
      intOption(
          "faro.worker.read.ahead.files",
          16,
          0,
          4096,
          "files",
          "On a disk read through the page cache: how many partition files of a shuffle, after "
              + "the highest partition fetched so far, the disk's reader threads read into the "
              + "page cache while no fetch waits for them, so the disk reads while reducers "
              + "compute. 0 reads nothing ahead. Also bounded by faro.worker.read.ahead.bytes.");
  public static final ConfigOption<Long> READ_AHEAD_BYTES =
      sizeOption(
          "faro.worker.read.ahead.bytes",
          "64m",
          0,
          1L << 30,
          "Most bytes of one shuffle read ahead (faro.worker.read.ahead.files). They take page "
              + "cache, not worker memory: the host needs this much free page cache per shuffle "
              + "read at once.");
  public static final ConfigOption<Boolean> FETCH_ZERO_COPY =
      booleanOption(
          "faro.worker.fetch.zero.copy",
          false,
          "Whether a chunk whose every page is in the page cache is sent from its file "
              + "(sendfile) instead of being read into the worker's buffers and copied from "
              + "them: on a disk read through the page cache (not faro.worker.io.mode direct), "
              + "for a location with a file of its own (not the runs layout) and a connection "
              + "without TLS. A reader thread checks residency (mincore) in the read's turn; a "
              + "chunk not resident is read there as with false. Off by default: over loopback "
              + "it measured slower, with more CPU on the reducers (docs/benchmarks.md, "
              + "\"Zero-copy fetch\"); measure it on hosts with real network cards before "
              + "turning it on. A page evicted between the check and the send is read by the "
              + "send, on the fetch event loop.");
  public static final ConfigOption<Duration> HEARTBEAT_INTERVAL =
      durationOption(
          "faro.worker.heartbeat.interval",
          "5s",
          Duration.ofMillis(50),
          "How often the worker reports its disks and shuffles to the masters.");

  public static final ConfigOption<Duration> GRACEFUL_TIMEOUT =
      durationOption(
          "faro.worker.graceful.timeout",
          "60s",
          Duration.ZERO,
          "How long a graceful stop (SIGTERM, bin/faro admin stop-worker) may take to leave "
              + "placement, answer pushes with split and seal every open partition file, so "
              + "that a restart serves what the worker acknowledged; what is not sealed in time "
              + "is lost to the restart. Keep systemd's TimeoutStopSec above it. 0 stops at "
              + "once.");
  public static final ConfigOption<Duration> DECOMMISSION_TIMEOUT =
      durationOption(
          "faro.worker.decommission.timeout",
          "6h",
          Duration.ofMillis(1),
          "How long a decommissioned worker (bin/faro admin decommission-worker) keeps serving "
              + "the shuffles it holds before it exits anyway; it exits as soon as the masters "
              + "have expired all of them.");

  public static final ConfigOption<Long> MEMORY_BUDGET =
      sizeOption(
          "faro.worker.memory.budget",
          "0",
          0,
          1L << 40,
          "Direct memory that pushed data waiting for its flush may take; 0 means "
              + MemorySizing.AUTO_BUDGET_PERCENT
              + "% of the JVM's direct memory limit (-XX:MaxDirectMemorySize). "
              + "Above the pause mark the worker stops reading push connections and answers "
              + "SLOW_DOWN. More than "
              + MemorySizing.MAX_BUDGET_PERCENT
              + "% of the limit is refused: "
              + "receive buffers and fetches need direct memory too.");
  public static final ConfigOption<Integer> MEMORY_PAUSE_PERCENT =
      intOption(
          "faro.worker.memory.pause.percent",
          90,
          1,
          100,
          "percent",
          "Share of faro.worker.memory.budget above which push connections are paused.");
  public static final ConfigOption<Integer> MEMORY_RESUME_PERCENT =
      intOption(
          "faro.worker.memory.resume.percent",
          70,
          0,
          99,
          "percent",
          "Share of faro.worker.memory.budget below which paused push connections resume. "
              + "Must be below faro.worker.memory.pause.percent.");

  public static final ConfigOption<Long> SPLIT_THRESHOLD =
      sizeOption(
          "faro.worker.partition.split.threshold",
          "1g",
          64 * 1024,
          1L << 50,
          "Size of a partition file after which the worker tells clients to continue the partition "
              + "at a new location (a split, possibly on another worker). Bounds one file and "
              + "spreads "
              + "a huge reducer partition over workers; a reducer reads all splits in order.");
  public static final ConfigOption<SplitMode> SPLIT_MODE =
      enumOption(
          "faro.worker.partition.split.mode",
          SplitMode.SOFT,
          SplitMode.class,
          "soft: past the threshold, keep appending and answer SOFT_SPLIT, so clients move without "
              + "resending anything; hard: refuse with SPLIT, clients resend the refused batches.");
  public static final ConfigOption<Duration> DISK_CHECK_INTERVAL =
      durationOption(
          "faro.worker.disk.check.interval",
          "5s",
          Duration.ofMillis(50),
          "How often the worker checks each disk: writes, forces and deletes a small file, and "
              + "compares its usable bytes with faro.worker.tier.TIER.reserve. A disk that "
              + "fails a check (or any write) is broken: nothing new goes there and its "
              + "partitions answer SPLIT until a check passes.");
  public static final ConfigOption<Duration> DISK_CHECK_TIMEOUT =
      durationOption(
          "faro.worker.disk.check.timeout",
          "60s",
          Duration.ofMillis(100),
          "A disk whose check has run for longer than this (a hung drive) counts as broken. "
              + "Generous: a busy disk may take seconds to force a small file.");

  /**
   * One option per disk tier, keyed {@code faro.worker.tier.<tier>.<what>}, with the default of
   * each tier.
   */
  private static <T> Map<DiskTier, ConfigOption<T>> perTier(
      Function<DiskTier, ConfigOption<T>> option) {
    Map<DiskTier, ConfigOption<T>> options = new EnumMap<>(DiskTier.class);
    for (DiskTier tier : DiskTier.values()) {
      options.put(tier, option.apply(tier));
    }
    return Collections.unmodifiableMap(options);
  }

  private static String tierKey(DiskTier tier, String what) {
    return "faro.worker.tier." + tier.configName() + "." + what;
  }

  /** faro.worker.tier.TIER.reserve: the free space below which a disk of the tier is full. */
  public static final Map<DiskTier, ConfigOption<Long>> TIER_RESERVE =
      perTier(
          tier ->
              sizeOption(
                  tierKey(tier, "reserve"),
                  "1g",
                  0,
                  1L << 50,
                  "A "
                      + tier.configName()
                      + "disk with fewer usable bytes than this (free space, or what its capacity "
                      + "in faro.worker.dirs leaves) is full: nothing new is placed there "
                      + "and its open partitions answer split, so clients continue them on "
                      + "another disk or tier. It must absorb what arrives between two "
                      + "disk checks."));

  /** faro.worker.tier.TIER.flush.threads: flusher threads of each disk of the tier. */
  public static final Map<DiskTier, ConfigOption<Integer>> TIER_FLUSH_THREADS =
      perTier(
          tier ->
              intOption(
                  tierKey(tier, "flush.threads"),
                  switch (tier) {
                    case NVME -> 4;
                    case SSD -> 2;
                    case HDD -> 1;
                  },
                  1,
                  64,
                  "threads",
                  "Flusher threads of each "
                      + tier.configName()
                      + " disk. One keeps an HDD's writes sequential; flash takes several. A "
                      + "partition always flushes on the same thread."));

  /** faro.worker.tier.TIER.layout: how each disk of the tier lays out partition data. */
  public static final Map<DiskTier, ConfigOption<LayoutSetting>> TIER_LAYOUT =
      perTier(
          tier ->
              enumOption(
                  tierKey(tier, "layout"),
                  LayoutSetting.AUTO,
                  LayoutSetting.class,
                  "How each "
                      + tier.configName()
                      + "disk lays out partition data. files: a file per partition location. "
                      + "runs: the locations of a shuffle on the disk are written together "
                      + "as sequential runs sorted by partition (faro.worker.runs.bytes) "
                      + "and read faro.worker.runs.read.around at a time, for disks priced "
                      + "in requests or seeks; runs needs the page cache, so "
                      + "faro.worker.io.mode direct refuses it. auto: runs on hdd disks "
                      + "unless faro.worker.io.mode is direct, files elsewhere."));

  /** faro.worker.runs.bytes: what a shuffle's locations on a runs disk buffer before a run. */
  public static final ConfigOption<Long> RUNS_BYTES =
      sizeOption(
          "faro.worker.runs.bytes",
          "64m",
          1L << 20,
          1L << 30,
          "On a disk of the runs layout: bytes one shuffle's locations (of one role, primary or "
              + "replica) buffer before they are written together as one run; a commit writes "
              + "the rest, memory pressure writes runs early. Larger means fewer, larger pieces "
              + "per location.");

  /** faro.worker.runs.read.around: bytes a read of a run reads from where its piece starts. */
  public static final ConfigOption<Long> RUNS_READ_AROUND =
      sizeOption(
          "faro.worker.runs.read.around",
          "1m",
          0,
          16L << 20,
          "On a disk of the runs layout: bytes a chunk read reads from the start of a run's piece "
              + "it did not just read, so that the pieces of the next partitions, which "
              + "reducers fetch next, are then in the page cache. Each reader thread of such a "
              + "disk holds a buffer this size. 0 reads only the pieces asked for.");

  /** faro.worker.tier.TIER.read.threads: reader threads of each disk of the tier. */
  public static final Map<DiskTier, ConfigOption<Integer>> TIER_READ_THREADS =
      perTier(
          tier ->
              intOption(
                  tierKey(tier, "read.threads"),
                  switch (tier) {
                    case NVME -> 4;
                    case SSD -> 2;
                    case HDD -> 1;
                  },
                  1,
                  64,
                  "threads",
                  "Threads of each "
                      + tier.configName()
                      + " disk that read chunks for fetches, taking queued reads in file-offset "
                      + "order. One keeps an HDD's reads in order; flash takes several."));

  public static final ConfigOption<Integer> RESERVE_MAX_LOCATIONS =
      intOption(
          "faro.worker.reserve.max.locations",
          100_000,
          1,
          10_000_000,
          "locations",
          "Most partition locations one ReserveSlots request may ask for; a larger request is "
              + "refused with LIMIT_EXCEEDED and nothing of it is reserved. Lifecycle managers "
              + "send at most 50,000 per request.");
  public static final ConfigOption<Integer> MAX_PARTITIONS =
      intOption(
          "faro.worker.max.partitions",
          0,
          0,
          100_000_000,
          "locations",
          "Most partition locations (of every shuffle, primaries and replicas) this worker holds "
              + "at once, whether they received data or not (one that received nothing is a few "
              + "dozen bytes); 0 allows eight per KiB of a quarter of the heap (2,097,152 with "
              + "-Xmx1g). A reservation beyond it is refused with LIMIT_EXCEEDED and the "
              + "lifecycle manager places those partitions elsewhere; when no other worker can "
              + "take them, the shuffle fails at once with this worker's answer (naming this "
              + "key), and falls back to Spark's shuffle under faro.client.fallback.policy=auto. "
              + "See faro.worker.max.written.partitions for those that received data.");

  public static final ConfigOption<Integer> MAX_WRITTEN_PARTITIONS =
      intOption(
          "faro.worker.max.written.partitions",
          0,
          0,
          100_000_000,
          "locations",
          "Most partition locations this worker holds at once that received data (a writer "
              + "each, about a KiB of heap); 0 allows one per KiB of a quarter of the heap "
              + "(262,144 with -Xmx1g). The first part for a location beyond it is answered "
              + "WORKER_FULL, which moves that partition to another worker, and logged (at most "
              + "every 10 s); a task whose every push met it fails with LIMIT_EXCEEDED naming this "
              + "key. The locations held in all are bounded by faro.worker.max.partitions.");

  public static final List<ConfigOption<?>> ALL = all();

  private static List<ConfigOption<?>> all() {
    List<ConfigOption<?>> all =
        new ArrayList<>(
            List.of(
                HOST,
                BIND_HOST,
                ID,
                RPC_PORT,
                PUSH_PORT,
                FETCH_PORT,
                HTTP_PORT,
                METRICS_ENABLED,
                DIRS,
                META_DIR,
                FLUSH_BUFFER_SIZE,
                CHUNK_SIZE,
                COMMIT_SYNC,
                IO_MODE,
                IO_READ_BUFFER_PER_DISK,
                READ_AHEAD_FILES,
                READ_AHEAD_BYTES,
                FETCH_ZERO_COPY,
                HEARTBEAT_INTERVAL,
                GRACEFUL_TIMEOUT,
                DECOMMISSION_TIMEOUT,
                MEMORY_BUDGET,
                MEMORY_PAUSE_PERCENT,
                MEMORY_RESUME_PERCENT,
                SPLIT_THRESHOLD,
                SPLIT_MODE,
                DISK_CHECK_INTERVAL,
                DISK_CHECK_TIMEOUT));
    all.addAll(TIER_RESERVE.values());
    all.addAll(TIER_FLUSH_THREADS.values());
    all.addAll(TIER_READ_THREADS.values());
    all.addAll(TIER_LAYOUT.values());
    all.add(RUNS_BYTES);
    all.add(RUNS_READ_AROUND);
    all.addAll(List.of(RESERVE_MAX_LOCATIONS, MAX_PARTITIONS, MAX_WRITTEN_PARTITIONS));
    return List.copyOf(all);
  }

  private WorkerOptions() {}

  /** {@code configured}, or .faro-meta in the first disk's directory when empty. */
  static Path metaDir(String configured, List<DiskDir> dirs) {
    if (!configured.isEmpty()) {
      return Path.of(configured);
    }
    return dirs.isEmpty() ? Path.of(".faro-meta") : dirs.get(0).path().resolve(".faro-meta");
  }
}
