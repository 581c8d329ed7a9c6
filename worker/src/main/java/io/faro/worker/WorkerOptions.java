package io.faro.worker;

import static io.faro.common.config.ConfigOption.booleanOption;
import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.enumOption;
import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.listOption;
import static io.faro.common.config.ConfigOption.sizeOption;
import static io.faro.common.config.ConfigOption.stringOption;

import io.faro.common.config.ConfigException;
import io.faro.common.config.ConfigOption;
import io.faro.common.id.DiskTier;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.IoMode;
import io.faro.worker.storage.Layout;
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
 * <p>Over 400 lines, knowingly: one declaration per worker setting with its documentation
 * (docs/configuration.md is generated from them); the checks that tie settings together are {@link
 * WorkerSettings}'. Some docs are still essays with figures: shortening them is open.
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
              + "faro_worker_flush_seconds...). false leaves out only those; what the worker "
              + "counts anyway (traffic, disks, memory, holdings) is still exported. For measuring "
              + "what the metrics cost (docs/benchmarks.md, \"Metrics\").");
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
          "Directory of the worker's metadata store (RocksDB): which committed partition files it "
              + "holds, so that a restarted worker serves them again. Empty means .faro-meta in "
              + "the first directory of faro.worker.dirs. Keep it on a disk that outlives "
              + "restarts; losing it costs the committed shuffle data of the worker, not "
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
          "Target size of the chunks a partition file is cut into; reducers fetch one chunk "
              + "per request. A chunk ends after the pushed part that makes it reach this size. "
              + "A replica is cut by its primary worker's chunk size, so that both copies share "
              + "chunk boundaries even when the workers are configured differently.");
  public static final ConfigOption<Boolean> COMMIT_SYNC =
      booleanOption(
          "faro.worker.commit.sync",
          false,
          "Whether a commit forces each partition file, and the worker's record of the "
              + "commit (faro.worker.meta.dir), to the disk (fsync) before it answers. "
              + "false: a commit answers once the data, index, trailer and record are written to "
              + "the operating system, with no fsync at all; a worker process that dies (kill -9, out of memory, an upgrade) "
              + "loses nothing, since the kernel still writes its pages back, and the write-back "
              + "of a file deleted soon enough never happens at all. Only a machine that crashes or "
              + "loses power before the kernel has written a file back (vm.dirty_expire_centisecs, "
              + "30 s by default) can lose it: at its next start the worker checks each committed "
              + "file's length, trailer and index and serves only those that pass and whose "
              + "record survived (a file whose record was lost counts as uncommitted and is "
              + "deleted), and readers of the others read the replica or get a fetch failure, on which Spark runs the lost "
              + "maps again (as it does for the built-in shuffle when a node is lost). true: "
              + "every commit waits for an fsync per partition file, which on a disk priced in "
              + "requests (an HDD, a cloud volume) can take longer than the shuffle itself.");
  public static final ConfigOption<IoMode> IO_MODE =
      enumOption(
          "faro.worker.io.mode",
          IoMode.AUTO,
          IoMode.class,
          "How partition files are written and read. Either way, fetched chunks are read on "
              + "per-disk reader threads, in file-offset order. direct: O_DIRECT writes from "
              + "aligned staging buffers and O_DIRECT reads, bypassing the page cache (less CPU "
              + "and no page cache pressure on the host; nothing is cached for reads); a "
              + "directory whose file system refuses O_DIRECT stops the worker. buffered: writes "
              + "and reads through the page cache (fast re-reads while the data fits in memory). "
              + "auto: direct on nvme disks where the file system takes it (ext4, xfs; tmpfs "
              + "since Linux 6.6), buffered on ssd and hdd disks: on a disk priced in requests or "
              + "seeks the page cache serves what reducers read soon after it was written, and "
              + "write-back merges writes and never writes files deleted before it (measured in "
              + "docs/benchmarks.md, \"Slow disks\").");
  public static final ConfigOption<Long> IO_READ_BUFFER_PER_DISK =
      sizeOption(
          "faro.worker.io.read.buffer.per.disk",
          "64m",
          2L << 20,
          1L << 40,
          "Direct memory per disk (every disk, with direct I/O or not) that holds chunks read "
              + "for fetches until they are sent. A read reserves all it needs at once; when the "
              + "buffers are all lent out, reads wait for answers to drain (up to a quarter of "
              + "faro.network.request.timeout, then the fetch fails with a retryable TIMEOUT). "
              + "Must hold at least two chunks (2 x faro.worker.chunk.size + 2m); a chunk larger "
              + "than the buffers (one huge pushed part) is read on the disk's reader threads "
              + "too, into one buffer of its own per disk at a time. Counted with "
              + "faro.worker.memory.budget against the 90% limit of the JVM's direct memory.");
  public static final ConfigOption<Integer> READ_AHEAD_FILES =
      intOption(
          "faro.worker.read.ahead.files",
          16,
          0,
          4096,
          "files",
          "On a disk read through the page cache (faro.worker.io.mode buffered, or auto on ssd "
              + "and hdd disks): how many partition files of a shuffle the worker reads into the "
              + "page cache ahead of its reducers. They are the files after the highest "
              + "partition fetched so far (Spark starts reduce tasks in partition order), read "
              + "by the disk's reader threads only when no fetch waits for them. The disk then "
              + "reads while reducers compute instead of after each asks: on an emulated gp3 "
              + "volume this cut reducers' fetch wait by 43% and the reduce stage by 11%; a disk "
              + "busy all the time (an HDD at its request rate) gains nothing "
              + "(docs/benchmarks.md, \"Slow disks\"). A file already in the page cache costs "
              + "a residency check. 0 reads nothing ahead. Also bounded by "
              + "faro.worker.read.ahead.bytes.");
  public static final ConfigOption<Long> READ_AHEAD_BYTES =
      sizeOption(
          "faro.worker.read.ahead.bytes",
          "64m",
          0,
          1L << 30,
          "Most bytes of one shuffle's partition files read ahead beyond the highest partition "
              + "fetched (see faro.worker.read.ahead.files). They live in the page cache, not in "
              + "the worker's memory: the host needs this much free page cache per shuffle read "
              + "at once, or read-ahead is evicted before it is used.");
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
          "How long a graceful stop (SIGTERM, bin/faro admin stop-worker) may take: the worker "
              + "leaves placement, answers pushes with split so that clients move on, and seals "
              + "(writes, indexes, records, and syncs with faro.worker.commit.sync) every open partition file, so that a restart "
              + "serves what it acknowledged. Locations not sealed by then are lost to the "
              + "restart (their maps run again). Keep systemd's TimeoutStopSec above it. 0 turns "
              + "graceful stop off: SIGTERM stops at once.");
  public static final ConfigOption<Duration> DECOMMISSION_TIMEOUT =
      durationOption(
          "faro.worker.decommission.timeout",
          "6h",
          Duration.ofMillis(1),
          "How long a decommissioned worker (bin/faro admin decommission-worker) keeps serving "
              + "the shuffles it holds before it exits anyway; it exits as soon as the masters "
              + "have expired all of them.");

  /** The budget's share of the JVM's direct memory limit when none is configured. */
  static final int AUTO_BUDGET_PERCENT = 60;

  /** The largest budget accepted, as a share of the JVM's direct memory limit. */
  static final int MAX_BUDGET_PERCENT = 90;

  public static final ConfigOption<Long> MEMORY_BUDGET =
      sizeOption(
          "faro.worker.memory.budget",
          "0",
          0,
          1L << 40,
          "Direct memory that pushed data waiting for its flush may take; 0 means "
              + AUTO_BUDGET_PERCENT
              + "% of the JVM's direct memory limit (-XX:MaxDirectMemorySize). "
              + "Above the pause mark the worker stops reading push connections and answers "
              + "SLOW_DOWN. More than "
              + MAX_BUDGET_PERCENT
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

  /** What a partition location does once its file passes the split threshold. */
  public enum SplitMode {
    /**
     * Keep appending, and answer SOFT_SPLIT so that clients move on after the batches in flight.
     */
    SOFT,
    /** Refuse with SPLIT: clients push the refused batches to a new location. */
    HARD
  }

  public static final ConfigOption<Long> SPLIT_THRESHOLD =
      sizeOption(
          "faro.worker.partition.split.threshold",
          "1g",
          64 * 1024,
          1L << 50,
          "Size of a partition file after which the worker tells clients to continue the partition "
              + "at a new location (a split, possibly on another worker). Bounds one file and spreads "
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
              + "compares the usable bytes with the reserve of its tier (faro.worker.tier.TIER.reserve); a test-only slow-down marker is looked for too. A disk that fails the "
              + "check (or any write) is broken: nothing new goes there and its partitions refuse "
              + "data with SPLIT, until a check succeeds again.");
  public static final ConfigOption<Duration> DISK_CHECK_TIMEOUT =
      durationOption(
          "faro.worker.disk.check.timeout",
          "60s",
          Duration.ofMillis(100),
          "A disk whose check has run for longer than this (a hung drive) counts as broken. "
              + "Generous: a busy disk may take seconds to force a small file.");
  public static final ConfigOption<Integer> TESTING_DROP_PER_MILLE =
      intOption(
          "faro.worker.testing.drop.connections.per.mille",
          0,
          0,
          1000,
          "per mille",
          "For fault tests only: of every 1000 requests on the push and fetch ports, close the "
              + "connection on about this many, half before handling the request and half after "
              + "(its answer lost). 0 (the default) injects nothing.");

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
                      + " disk with fewer usable bytes than this (free space, or what its "
                      + "capacity in faro.worker.dirs leaves) is full: the masters place nothing "
                      + "new there (new partitions go to the fastest tier with room) and its open "
                      + "partitions answer split (soft or hard as "
                      + "faro.worker.partition.split.mode), so clients continue them elsewhere, on "
                      + "the next tier when this one has no room. Between checks the worker "
                      + "subtracts what it wrote since the last one. The reserve must absorb what "
                      + "is in flight meanwhile, up to what faro.worker.memory.budget holds for "
                      + "that disk."));

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

  /** A value of faro.worker.tier.TIER.layout. */
  public enum LayoutSetting {
    /** runs on hdd disks read through the page cache, files everywhere else. */
    AUTO,
    FILES,
    RUNS;

    /** The layout of a disk of {@code tier} with this setting, under {@code ioMode}. */
    Layout resolve(DiskTier tier, IoMode ioMode) {
      return switch (this) {
        case FILES -> Layout.FILES;
        case RUNS -> Layout.RUNS;
        case AUTO -> tier == DiskTier.HDD && ioMode != IoMode.DIRECT ? Layout.RUNS : Layout.FILES;
      };
    }
  }

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
                      + " disk lays out partition data. files: a file per partition location, "
                      + "written a flush buffer (faro.worker.flush.buffer.size) at a time and read "
                      + "in one piece. runs: what a shuffle's locations on the disk buffered is "
                      + "written together, once it reaches faro.worker.runs.bytes, as one "
                      + "sequential file sorted by partition (a run), and a location's data is its "
                      + "extents in the shuffle's runs; reads of a run read "
                      + "faro.worker.runs.read.around bytes from where they start, so that reducers, "
                      + "which fetch in partition order, find the next partitions in the page cache. "
                      + "For disks priced in requests or seeks: large writes instead of one small "
                      + "write-back per location, and large reads (on an emulated HDD, a 2.7 GB "
                      + "shuffle of 1,000 x 4,000 blocks took 68 s in runs against 151 s in files: "
                      + "docs/benchmarks.md). A runs disk is written and read through the page "
                      + "cache: runs with faro.worker.io.mode direct is refused. auto: runs on hdd "
                      + "disks unless faro.worker.io.mode is direct, files elsewhere. A worker "
                      + "older than the runs layout drops the shuffles committed in runs when it "
                      + "restarts on them (their reducers fall back to a replica, or Spark "
                      + "recomputes the maps)."));

  /** faro.worker.runs.bytes: what a shuffle's locations on a runs disk buffer before a run. */
  public static final ConfigOption<Long> RUNS_BYTES =
      sizeOption(
          "faro.worker.runs.bytes",
          "64m",
          1L << 20,
          1L << 30,
          "On a disk of the runs layout (faro.worker.tier.TIER.layout): bytes the locations of one "
              + "shuffle (of one role, primary or replica) on the disk buffer in memory before "
              + "they are written together as one run; a commit writes the rest as a last run, and "
              + "memory pressure (faro.worker.memory.budget) writes runs early. Larger means fewer "
              + "runs, so each location's data is in fewer, larger pieces.");

  /** faro.worker.runs.read.around: bytes a read of a run reads from where its piece starts. */
  public static final ConfigOption<Long> RUNS_READ_AROUND =
      sizeOption(
          "faro.worker.runs.read.around",
          "1m",
          0,
          16L << 20,
          "On a disk of the runs layout: a chunk read that needs a piece of a run the reader did "
              + "not just read reads this many bytes from the piece's start, in one read through "
              + "the page cache, so that the next partitions' pieces of that run (which reducers "
              + "fetch next) are then in memory. Each reader thread of such a disk holds a buffer "
              + "of this size. 0 reads only the pieces asked for.");

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

  /**
   * For tests only: milliseconds per MiB that writes to a disk take longer while its directory
   * holds a file named {@value io.faro.worker.storage.Disk#TESTING_SLOW_FILE}.
   */
  public static final ConfigOption<Duration> TESTING_SLOW_DISK_DELAY =
      durationOption(
          "faro.worker.testing.slow.disk.delay.per.mib",
          "0ms",
          Duration.ZERO,
          "For tests only: every MiB written to a disk whose directory holds a file named "
              + ".faro-testing-slow takes this much longer (the file is looked for at each disk "
              + "check), so that a test can slow one disk down and let it recover. 0 (the "
              + "default) slows nothing.");

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
              + "at once; 0 (the default) allows one per KiB of a quarter "
              + "of the heap (-Xmx): 262,144 with 1 GiB. A reservation beyond the limit is refused "
              + "with LIMIT_EXCEEDED, and the lifecycle manager places those partitions on other "
              + "workers. Locations are freed when their shuffle is unregistered.");

  /** Heap one held partition location is budgeted (its writer, key, file and chunk list). */
  static final long HEAP_PER_PARTITION = 1024;

  /** faro.worker.max.partitions as configured, or derived from {@code maxHeap} when 0. */
  static int maxPartitions(int configured, long maxHeap) {
    if (configured > 0) {
      return configured;
    }
    return (int) Math.max(1_000, Math.min(Integer.MAX_VALUE, maxHeap / 4 / HEAP_PER_PARTITION));
  }

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
    all.addAll(
        List.of(
            TESTING_DROP_PER_MILLE,
            TESTING_SLOW_DISK_DELAY,
            RESERVE_MAX_LOCATIONS,
            MAX_PARTITIONS));
    return List.copyOf(all);
  }

  private WorkerOptions() {}

  /**
   * The budget in bytes: a share of {@code maxDirect} (the JVM's direct memory limit) when not
   * configured; a configured one that would leave the JVM no room for receive buffers is refused
   * rather than left to end in OutOfMemoryError under load.
   */
  static long memoryBudget(long configured, long maxDirect) {
    if (configured == 0) {
      return maxDirect / 100 * AUTO_BUDGET_PERCENT;
    }
    if (configured > maxDirect / 100 * MAX_BUDGET_PERCENT) {
      throw new ConfigException(
          "faro.worker.memory.budget "
              + configured
              + " is more than "
              + MAX_BUDGET_PERCENT
              + "% of the "
              + maxDirect
              + " bytes of direct memory this JVM may "
              + "use: lower it, or raise -XX:MaxDirectMemorySize (FARO_JAVA_OPTS for bin/faro)");
    }
    return configured;
  }

  /** {@code configured}, or .faro-meta in the first disk's directory when empty. */
  static Path metaDir(String configured, List<DiskDir> dirs) {
    if (!configured.isEmpty()) {
      return Path.of(configured);
    }
    return dirs.isEmpty() ? Path.of(".faro-meta") : dirs.get(0).path().resolve(".faro-meta");
  }
}
