package io.faro.client;

import io.faro.common.batch.BatchFormat;
import io.faro.common.config.FaroConf;
import io.faro.common.master.MasterOptions;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import java.time.Duration;
import java.util.List;

/** The typed client settings. */
public record ClientSettings(
    NetworkSettings network,
    List<HostPort> masters,
    Duration masterRetryTimeout,
    Duration masterAttemptTimeout,
    int batchSize,
    long bufferSize,
    int mergeSize,
    int maxInFlight,
    BatchFormat.Codec codec,
    int zstdLevel,
    int prefetchChunks,
    Duration fetchTimeout,
    String lifecycleHost,
    String lifecycleBindHost,
    int lifecyclePort,
    Duration appHeartbeatInterval,
    Duration commitTimeout,
    boolean replicate,
    boolean placeAtRegister,
    PartitionPages pages,
    ClientOptions.FallbackPolicy fallbackPolicy,
    Duration fallbackConnectTimeout,
    int fallbackMaxPartitions,
    int reviveMaxAttempts,
    int fetchRetries,
    Duration fetchRetryWait,
    Duration workerRestartWait) {

  public static ClientSettings from(FaroConf conf) {
    return new ClientSettings(
        NetworkSettings.from(conf),
        conf.get(MasterOptions.ENDPOINTS),
        conf.get(MasterOptions.RETRY_TIMEOUT),
        conf.get(MasterOptions.ATTEMPT_TIMEOUT),
        (int) (long) conf.get(ClientOptions.BATCH_SIZE),
        conf.get(ClientOptions.BUFFER_SIZE),
        (int) (long) conf.get(ClientOptions.MERGE_SIZE),
        conf.get(ClientOptions.MAX_IN_FLIGHT),
        conf.get(ClientOptions.COMPRESS) ? conf.get(ClientOptions.CODEC) : BatchFormat.Codec.NONE,
        conf.get(ClientOptions.ZSTD_LEVEL),
        conf.get(ClientOptions.PREFETCH_CHUNKS),
        conf.get(ClientOptions.FETCH_TIMEOUT),
        conf.get(ClientOptions.LIFECYCLE_HOST),
        conf.get(ClientOptions.LIFECYCLE_BIND_HOST).isBlank()
            ? "0.0.0.0"
            : conf.get(ClientOptions.LIFECYCLE_BIND_HOST).trim(),
        conf.get(ClientOptions.LIFECYCLE_PORT),
        conf.get(ClientOptions.APP_HEARTBEAT_INTERVAL),
        conf.get(ClientOptions.COMMIT_TIMEOUT),
        conf.get(ClientOptions.REPLICATE),
        conf.get(ClientOptions.PLACE_AT_REGISTER),
        new PartitionPages(conf.get(ClientOptions.PARTITIONS_PER_PAGE)),
        conf.get(ClientOptions.FALLBACK_POLICY),
        conf.get(ClientOptions.FALLBACK_CONNECT_TIMEOUT),
        conf.get(ClientOptions.FALLBACK_MAX_PARTITIONS),
        conf.get(ClientOptions.REVIVE_MAX_ATTEMPTS),
        conf.get(ClientOptions.FETCH_RETRIES),
        conf.get(ClientOptions.FETCH_RETRY_WAIT),
        conf.get(ClientOptions.WORKER_RESTART_WAIT));
  }
}
