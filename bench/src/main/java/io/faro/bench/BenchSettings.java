package io.faro.bench;

import static java.util.Objects.requireNonNull;

import io.faro.bench.cluster.ClusterTarget;
import io.faro.bench.workload.DataKind;
import io.faro.bench.workload.RecordGenerator;
import io.faro.client.ClientOptions;
import io.faro.client.ClientSettings;
import io.faro.common.config.FaroConf;
import io.faro.common.master.MasterOptions;
import io.faro.common.network.HostPort;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What one benchmark run does. Validated on construction; messages name the command-line option.
 *
 * @param confFile a settings file: client settings for the benchmark, and every setting of the
 *     processes of a local cluster
 * @param extraSettings {@code faro.*} client settings from {@code --set}, applied over the file
 * @param totalBytes record bytes all map tasks push together
 * @param warmupBytes record bytes of an unmeasured shuffle run first, so that both this process and
 *     the workers have compiled their hot paths (0: none)
 * @param threads map tasks run at once, and readers run at once
 * @param timeout the whole run's limit
 */
public record BenchSettings(
    ClusterTarget target,
    Optional<Path> confFile,
    Map<String, String> extraSettings,
    int maps,
    int partitions,
    long totalBytes,
    long warmupBytes,
    int recordSize,
    DataKind data,
    Codec codec,
    int threads,
    long seed,
    Duration timeout) {

  public BenchSettings {
    requireNonNull(target, "target is null");
    requireNonNull(confFile, "confFile is null");
    extraSettings = Map.copyOf(new TreeMap<>(extraSettings));
    requireNonNull(data, "data is null");
    requireNonNull(codec, "codec is null");
    requireNonNull(timeout, "timeout is null");
    check(maps >= 1, "--maps must be at least 1, got " + maps);
    check(partitions >= 1, "--partitions must be at least 1, got " + partitions);
    check(
        recordSize >= RecordGenerator.MIN_RECORD_SIZE && recordSize <= (1 << 20),
        "--record-size must be between "
            + RecordGenerator.MIN_RECORD_SIZE
            + " and 1048576 bytes, got "
            + recordSize);
    check(
        totalBytes >= recordSize,
        "--total-bytes must hold at least one record of --record-size "
            + recordSize
            + " bytes, got "
            + totalBytes);
    check(
        warmupBytes == 0 || warmupBytes >= recordSize,
        "--warmup must be 0 or hold at least one record of "
            + "--record-size "
            + recordSize
            + " bytes, got "
            + warmupBytes);
    check(threads >= 1, "--threads must be at least 1, got " + threads);
    check(!timeout.isNegative() && !timeout.isZero(), "--timeout must be positive, got " + timeout);
    for (String key : extraSettings.keySet()) {
      check(key.startsWith("faro."), "--set takes faro.* settings, got '" + key + "'");
    }
  }

  private static void check(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }

  /** The same run with {@link #warmupBytes} of records and no warm-up of its own. */
  public BenchSettings warmup() {
    return new BenchSettings(
        target,
        confFile,
        extraSettings,
        maps,
        partitions,
        warmupBytes,
        0,
        recordSize,
        data,
        codec,
        threads,
        seed,
        timeout);
  }

  /** Records of all map tasks: whole records of {@code recordSize} in {@code totalBytes}. */
  public long totalRecords() {
    return totalBytes / recordSize;
  }

  /** Records map {@code mapId} writes: an even share, the first maps taking one more. */
  public long recordsOfMap(int mapId) {
    long total = totalRecords();
    return total / maps + (mapId < total % maps ? 1 : 0);
  }

  /**
   * The client's settings: the file, then {@code --set}, then what the benchmark decides itself
   * (the masters, a loopback lifecycle manager, and {@code --codec}, which wins over
   * faro.client.compression.codec).
   *
   * @throws io.faro.common.config.ConfigException naming a key with a bad value
   */
  public FaroConf clientConf(List<HostPort> masters) {
    FaroConf conf =
        confFile
            .map(FaroConf::load)
            .orElse(FaroConf.empty())
            .withAll(FaroConf.of(extraSettings))
            .with(
                MasterOptions.ENDPOINTS.key(),
                masters.stream().map(HostPort::toString).collect(Collectors.joining(",")))
            .with(ClientOptions.LIFECYCLE_HOST.key(), "127.0.0.1")
            .with(ClientOptions.COMPRESS.key(), "true")
            .with(ClientOptions.CODEC.key(), codec.setting());
    ClientSettings.from(conf); // validates every client key now, before a cluster starts
    return conf;
  }
}
