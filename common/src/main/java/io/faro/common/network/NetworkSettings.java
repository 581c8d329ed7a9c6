package io.faro.common.network;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.AuthSettings;
import io.faro.common.config.ConfigException;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.tls.Tls;
import java.time.Duration;
import java.util.Objects;

/**
 * The typed network settings of one process.
 *
 * @param maxRequestSize frames a server takes on a port without data (see {@link
 *     #NetworkOptions.MAX_REQUEST_SIZE})
 * @param auth what a server checks and a client pool proves (see {@link AuthOptions})
 * @param tls how connections are encrypted (see {@link io.faro.common.tls.TlsOptions})
 */
public record NetworkSettings(
    int ioThreads,
    Duration connectTimeout,
    Duration requestTimeout,
    int maxFrameSize,
    int maxRequestSize,
    Duration idleTimeout,
    int maxConnectionsPerPeer,
    long maxPendingAnswerBytes,
    NetworkOptions.Limits limits,
    AuthSettings auth,
    Tls tls) {
  public NetworkSettings {
    Objects.requireNonNull(limits, "limits is null");
    Objects.requireNonNull(auth, "auth is null");
    Objects.requireNonNull(tls, "tls is null");
    if (maxRequestSize > maxFrameSize) {
      throw new ConfigException(
          NetworkOptions.MAX_REQUEST_SIZE.key()
              + " ("
              + maxRequestSize
              + ") must not exceed "
              + NetworkOptions.MAX_FRAME_SIZE.key()
              + " ("
              + maxFrameSize
              + ")");
    }
  }

  /** NetworkSettings with these four and every other value at its default. */
  public NetworkSettings(
      int ioThreads, Duration connectTimeout, Duration requestTimeout, int maxFrameSize) {
    this(
        ioThreads,
        connectTimeout,
        requestTimeout,
        maxFrameSize,
        (int)
            Math.min(
                maxFrameSize,
                ConfigOption.parseSize(NetworkOptions.MAX_REQUEST_SIZE.defaultText())),
        Duration.ofMinutes(10),
        512,
        256L << 20,
        NetworkOptions.Limits.DEFAULTS,
        AuthSettings.OFF,
        Tls.OFF);
  }

  public static NetworkSettings from(FaroConf conf) {
    int threads = conf.get(NetworkOptions.IO_THREADS);
    int maxFrame = (int) (long) conf.get(NetworkOptions.MAX_FRAME_SIZE);
    // Unset, the request limit follows a frame limit lowered below its default.
    int maxRequest =
        conf.raw(NetworkOptions.MAX_REQUEST_SIZE.key()).isPresent()
            ? (int) (long) conf.get(NetworkOptions.MAX_REQUEST_SIZE)
            : (int) Math.min(maxFrame, conf.get(NetworkOptions.MAX_REQUEST_SIZE));
    return new NetworkSettings(
        threads == 0 ? Runtime.getRuntime().availableProcessors() : threads,
        conf.get(NetworkOptions.CONNECT_TIMEOUT),
        conf.get(NetworkOptions.REQUEST_TIMEOUT),
        maxFrame,
        maxRequest,
        conf.get(NetworkOptions.IDLE_TIMEOUT),
        conf.get(NetworkOptions.MAX_CONNECTIONS_PER_PEER),
        conf.get(NetworkOptions.MAX_PENDING_ANSWER_BYTES),
        NetworkOptions.Limits.from(conf),
        AuthSettings.tool(conf),
        Tls.from(conf));
  }

  /** These settings with {@code threads} event-loop threads. */
  public NetworkSettings withIoThreads(int threads) {
    return new NetworkSettings(
        threads,
        connectTimeout,
        requestTimeout,
        maxFrameSize,
        maxRequestSize,
        idleTimeout,
        maxConnectionsPerPeer,
        maxPendingAnswerBytes,
        limits,
        auth,
        tls);
  }

  /** These settings with {@code auth} (a member's, checked by {@link AuthSettings#member}). */
  public NetworkSettings withAuth(AuthSettings auth) {
    return new NetworkSettings(
        ioThreads,
        connectTimeout,
        requestTimeout,
        maxFrameSize,
        maxRequestSize,
        idleTimeout,
        maxConnectionsPerPeer,
        maxPendingAnswerBytes,
        limits,
        auth,
        tls);
  }
}
