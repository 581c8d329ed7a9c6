package io.faro.worker;

import static io.faro.worker.WorkerOptions.BIND_HOST;
import static io.faro.worker.WorkerOptions.CHUNK_SIZE;
import static io.faro.worker.WorkerOptions.COMMIT_SYNC;
import static io.faro.worker.WorkerOptions.DECOMMISSION_TIMEOUT;
import static io.faro.worker.WorkerOptions.DIRS;
import static io.faro.worker.WorkerOptions.DISK_CHECK_INTERVAL;
import static io.faro.worker.WorkerOptions.DISK_CHECK_TIMEOUT;
import static io.faro.worker.WorkerOptions.FETCH_PORT;
import static io.faro.worker.WorkerOptions.FETCH_ZERO_COPY;
import static io.faro.worker.WorkerOptions.FLUSH_BUFFER_SIZE;
import static io.faro.worker.WorkerOptions.GRACEFUL_TIMEOUT;
import static io.faro.worker.WorkerOptions.HEARTBEAT_INTERVAL;
import static io.faro.worker.WorkerOptions.HOST;
import static io.faro.worker.WorkerOptions.HTTP_PORT;
import static io.faro.worker.WorkerOptions.ID;
import static io.faro.worker.WorkerOptions.IO_MODE;
import static io.faro.worker.WorkerOptions.IO_READ_BUFFER_PER_DISK;
import static io.faro.worker.WorkerOptions.MAX_PARTITIONS;
import static io.faro.worker.WorkerOptions.MAX_WRITTEN_PARTITIONS;
import static io.faro.worker.WorkerOptions.MEMORY_BUDGET;
import static io.faro.worker.WorkerOptions.MEMORY_PAUSE_PERCENT;
import static io.faro.worker.WorkerOptions.MEMORY_RESUME_PERCENT;
import static io.faro.worker.WorkerOptions.META_DIR;
import static io.faro.worker.WorkerOptions.METRICS_ENABLED;
import static io.faro.worker.WorkerOptions.PUSH_PORT;
import static io.faro.worker.WorkerOptions.READ_AHEAD_BYTES;
import static io.faro.worker.WorkerOptions.READ_AHEAD_FILES;
import static io.faro.worker.WorkerOptions.RESERVE_MAX_LOCATIONS;
import static io.faro.worker.WorkerOptions.RPC_PORT;
import static io.faro.worker.WorkerOptions.RUNS_BYTES;
import static io.faro.worker.WorkerOptions.RUNS_READ_AROUND;
import static io.faro.worker.WorkerOptions.SPLIT_MODE;
import static io.faro.worker.WorkerOptions.SPLIT_THRESHOLD;
import static io.faro.worker.WorkerOptions.TIER_FLUSH_THREADS;
import static io.faro.worker.WorkerOptions.TIER_LAYOUT;
import static io.faro.worker.WorkerOptions.TIER_READ_THREADS;
import static io.faro.worker.WorkerOptions.TIER_RESERVE;

import io.faro.common.config.ConfigException;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.id.DiskTier;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterOptions;
import io.faro.common.network.FrameCodec;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.worker.storage.DirectIo;
import io.faro.worker.storage.DiskChecker;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.DiskThreads;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.IoMode;
import io.faro.worker.storage.Layout;
import io.netty.util.internal.PlatformDependent;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The typed, validated settings of one worker process, by feature: its ports, its storage, its
 * memory, its link to the masters, how it leaves and the network (with its secrets). Built from
 * {@link WorkerOptions}' keys by {@link #from}, which checks how they fit together (and that the
 * memory budget and the disks' buffers fit in the JVM's direct memory) and names the key at fault.
 * Immutable.
 *
 * <p>About 400 lines: a tenth of them are the static imports of the keys it reads; the rest are the
 * feature records and the cross-key checks, each a few lines.
 */
public record WorkerSettings(
    Ports ports,
    Storage storage,
    Memory memory,
    MasterLink masterLink,
    Leaving leaving,
    NetworkSettings network) {

  /** Where the worker listens and what it advertises. */
  public record Ports(
      String host,
      String bindHost,
      Optional<WorkerId> id,
      int rpcPort,
      int pushPort,
      int fetchPort,
      int httpPort,
      boolean metricsEnabled) {}

  /** The disks, how they are written and read, and what one worker may hold on them. */
  public record Storage(
      List<DiskDir> dirs,
      Path metaDir,
      long flushBufferSize,
      Map<DiskTier, DiskThreads> diskThreads,
      Map<DiskTier, Layout> layouts,
      long runBytes,
      long runReadAround,
      long chunkSize,
      boolean commitSync,
      IoMode ioMode,
      long ioReadBufferPerDisk,
      int readAheadFiles,
      long readAheadBytes,
      boolean fetchZeroCopy,
      long splitThreshold,
      SplitMode splitMode,
      DiskChecker.Settings diskCheck,
      int reserveMaxLocations,
      int maxPartitions,
      int maxWrittenPartitions) {
    public Storage {
      dirs = List.copyOf(dirs);
      diskThreads = Map.copyOf(diskThreads);
      layouts = Map.copyOf(layouts);
    }

    /**
     * Direct memory the disks may take besides the memory budget, at most: every disk's read
     * buffers (whatever its I/O mode); unless every disk is buffered, the staging buffer of every
     * flusher of a disk not in runs; and the read-around buffer of every reader thread of a disk in
     * runs.
     */
    public long diskMemoryBytes() {
      long bytes = 0;
      for (DiskDir dir : dirs) {
        boolean runs = layouts.get(dir.tier()) == Layout.RUNS;
        long staging =
            ioMode == IoMode.BUFFERED || runs
                ? 0
                : (long) diskThreads.get(dir.tier()).flush() * DirectIo.STAGING_BYTES;
        // A runs disk's reader threads each read around into a buffer of their own.
        long around = runs ? diskThreads.get(dir.tier()).read() * runReadAround : 0;
        bytes += ioReadBufferPerDisk + staging + around;
      }
      return bytes;
    }
  }

  /** The budget of partition buffers, and when push connections pause and resume. */
  public record Memory(long budget, int pausePercent, int resumePercent) {
    /** Bytes in partition buffers above which push connections pause. */
    public long pauseBytes() {
      return budget / 100 * pausePercent;
    }

    /** Bytes in partition buffers below which paused push connections resume. */
    public long resumeBytes() {
      return budget / 100 * resumePercent;
    }
  }

  /** The masters the worker registers with and heartbeats to, and how it retries them. */
  public record MasterLink(
      List<HostPort> masters,
      Duration heartbeatInterval,
      Duration retryTimeout,
      Duration attemptTimeout) {
    public MasterLink {
      masters = List.copyOf(masters);
    }
  }

  /** How long a graceful stop and a decommission may take. */
  public record Leaving(Duration gracefulTimeout, Duration decommissionTimeout) {}

  /**
   * Reads and cross-checks every worker key.
   *
   * @throws ConfigException naming the key (or keys) at fault
   */
  public static WorkerSettings from(FaroConf conf) {
    String configuredId = conf.get(ID).trim();
    WorkerSettings settings =
        new WorkerSettings(
            new Ports(
                advertisedHost(conf.get(HOST).trim()),
                conf.get(BIND_HOST).trim(),
                configuredId.isEmpty() ? Optional.empty() : Optional.of(new WorkerId(configuredId)),
                conf.get(RPC_PORT),
                conf.get(PUSH_PORT),
                conf.get(FETCH_PORT),
                conf.get(HTTP_PORT),
                conf.get(METRICS_ENABLED)),
            storage(conf),
            new Memory(
                MemorySizing.memoryBudget(
                    conf.get(MEMORY_BUDGET), PlatformDependent.maxDirectMemory()),
                conf.get(MEMORY_PAUSE_PERCENT),
                conf.get(MEMORY_RESUME_PERCENT)),
            new MasterLink(
                conf.get(MasterOptions.ENDPOINTS),
                conf.get(HEARTBEAT_INTERVAL),
                conf.get(MasterOptions.RETRY_TIMEOUT),
                conf.get(MasterOptions.ATTEMPT_TIMEOUT)),
            new Leaving(conf.get(GRACEFUL_TIMEOUT), conf.get(DECOMMISSION_TIMEOUT)),
            memberNetwork(conf));
    settings.check();
    settings.checkDirectMemory(PlatformDependent.maxDirectMemory());
    return settings;
  }

  private static Storage storage(FaroConf conf) {
    return new Storage(
        conf.get(DIRS),
        WorkerOptions.metaDir(conf.get(META_DIR).trim(), conf.get(DIRS)),
        conf.get(FLUSH_BUFFER_SIZE),
        byTier(
            tier ->
                new DiskThreads(
                    conf.get(TIER_FLUSH_THREADS.get(tier)), conf.get(TIER_READ_THREADS.get(tier)))),
        byTier(tier -> conf.get(TIER_LAYOUT.get(tier)).resolve(tier, conf.get(IO_MODE))),
        conf.get(RUNS_BYTES),
        conf.get(RUNS_READ_AROUND),
        conf.get(CHUNK_SIZE),
        conf.get(COMMIT_SYNC),
        conf.get(IO_MODE),
        conf.get(IO_READ_BUFFER_PER_DISK),
        conf.get(READ_AHEAD_FILES),
        conf.get(READ_AHEAD_BYTES),
        conf.get(FETCH_ZERO_COPY),
        conf.get(SPLIT_THRESHOLD),
        conf.get(SPLIT_MODE),
        new DiskChecker.Settings(
            byTier(tier -> conf.get(TIER_RESERVE.get(tier))),
            conf.get(DISK_CHECK_INTERVAL),
            conf.get(DISK_CHECK_TIMEOUT)),
        conf.get(RESERVE_MAX_LOCATIONS),
        MemorySizing.maxPartitions(conf.get(MAX_PARTITIONS), Runtime.getRuntime().maxMemory()),
        MemorySizing.maxWrittenPartitions(
            conf.get(MAX_WRITTEN_PARTITIONS), Runtime.getRuntime().maxMemory()));
  }

  private static <T> Map<DiskTier, T> byTier(Function<DiskTier, T> value) {
    Map<DiskTier, T> values = new EnumMap<>(DiskTier.class);
    for (DiskTier tier : DiskTier.values()) {
      values.put(tier, value.apply(tier));
    }
    return values;
  }

  private void check() {
    checkStorage(storage);
    if (memory.resumePercent() >= memory.pausePercent()) {
      throw new ConfigException(
          MEMORY_RESUME_PERCENT.key()
              + " ("
              + memory.resumePercent()
              + ") must be below "
              + MEMORY_PAUSE_PERCENT.key()
              + " ("
              + memory.pausePercent()
              + ")");
    }
    if (storage.chunkSize() + FrameCodec.HEADER >= network.maxFrameSize()) {
      throw new ConfigException(
          CHUNK_SIZE.key()
              + " ("
              + storage.chunkSize()
              + ") must be smaller than "
              + NetworkOptions.MAX_FRAME_SIZE.key()
              + " ("
              + network.maxFrameSize()
              + "): a fetched chunk travels in one frame");
    }
    // Every disk reads chunks into its read buffers, whatever its I/O mode.
    long leastBuffers = 2 * storage.chunkSize() + (2L << 20);
    if (storage.ioReadBufferPerDisk() < leastBuffers) {
      throw new ConfigException(
          IO_READ_BUFFER_PER_DISK.key()
              + " ("
              + storage.ioReadBufferPerDisk()
              + ") must hold at least two chunks: 2 x "
              + CHUNK_SIZE.key()
              + " ("
              + storage.chunkSize()
              + ") + 2m = "
              + leastBuffers);
    }
    checkDistinct(RPC_PORT, ports.rpcPort(), PUSH_PORT, ports.pushPort());
    checkDistinct(RPC_PORT, ports.rpcPort(), FETCH_PORT, ports.fetchPort());
    checkDistinct(PUSH_PORT, ports.pushPort(), FETCH_PORT, ports.fetchPort());
    checkDistinct(RPC_PORT, ports.rpcPort(), HTTP_PORT, ports.httpPort());
    checkDistinct(PUSH_PORT, ports.pushPort(), HTTP_PORT, ports.httpPort());
    checkDistinct(FETCH_PORT, ports.fetchPort(), HTTP_PORT, ports.httpPort());
  }

  private static void checkStorage(Storage storage) {
    if (storage.ioMode() == IoMode.DIRECT) {
      for (DiskDir dir : storage.dirs()) {
        if (storage.layouts().get(dir.tier()) == Layout.RUNS) {
          throw new ConfigException(
              TIER_LAYOUT.get(dir.tier()).key()
                  + " is runs, which is written and read through the page cache, but "
                  + IO_MODE.key()
                  + " is direct and "
                  + dir.path()
                  + " is of that tier: set "
                  + IO_MODE.key()
                  + " to auto or buffered, or the layout to files");
        }
      }
    }
    if (storage.dirs().isEmpty()) {
      throw new ConfigException(
          DIRS.key()
              + " is not set: list the worker's disks as "
              + "path:tier (tier one of "
              + DiskTier.allowed()
              + "), e.g. /data1/faro:ssd,/data2/faro:hdd");
    }
    Set<Path> seen = new HashSet<>();
    for (DiskDir dir : storage.dirs()) {
      if (!seen.add(dir.path().toAbsolutePath().normalize())) {
        throw new ConfigException(DIRS.key() + " lists " + dir.path() + " twice");
      }
    }
  }

  private static void checkDistinct(
      ConfigOption<Integer> a, int portA, ConfigOption<Integer> b, int portB) {
    if (portA != 0 && portA == portB) {
      throw new ConfigException(
          a.key() + " and " + b.key() + " are both " + portA + ": each server needs its own port");
    }
  }

  /**
   * Refuses settings whose memory budget and the disks' buffers together leave the JVM too little
   * direct memory for network buffers ({@code maxDirect}: its limit).
   */
  void checkDirectMemory(long maxDirect) {
    MemorySizing.checkDirectMemory(
        memory.budget(),
        storage.diskMemoryBytes(),
        storage.dirs().size(),
        storage.ioReadBufferPerDisk(),
        maxDirect);
  }

  /** How {@link Disks} should do its I/O. */
  public Disks.Options diskOptions() {
    // A quarter of the request timeout: a read that waits longer for buffers would answer a
    // client that has given up on it.
    return new Disks.Options(
        storage.diskThreads(),
        storage.ioMode(),
        storage.ioReadBufferPerDisk(),
        Math.max(1, network.requestTimeout().toMillis() / 4),
        storage.layouts(),
        (int) storage.runReadAround());
  }

  /** The network settings, with the secrets they read checked as a member needs them. */
  private static NetworkSettings memberNetwork(FaroConf conf) {
    NetworkSettings network = NetworkSettings.from(conf);
    network.auth().checkedAsMember();
    return network;
  }

  private static String advertisedHost(String configured) {
    if (!configured.isEmpty()) {
      return configured;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      throw new ConfigException(
          "cannot determine the local host name (" + e.getMessage() + "): set " + HOST.key());
    }
  }
}
