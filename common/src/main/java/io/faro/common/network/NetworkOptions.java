package io.faro.common.network;

import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.intOption;
import static io.faro.common.config.ConfigOption.sizeOption;

import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import java.time.Duration;
import java.util.List;

/** Transport settings, shared by every process. */
public final class NetworkOptions {
  public static final ConfigOption<Integer> IO_THREADS =
      intOption("faro.network.io.threads", 0, 0, 1024, "threads",
          "Netty event-loop threads per server or client pool; 0 means the number of cores.");
  public static final ConfigOption<Duration> CONNECT_TIMEOUT =
      durationOption("faro.network.connect.timeout", "10s", Duration.ofMillis(100),
          "How long to wait for a TCP connection to a master, worker or lifecycle manager.");
  public static final ConfigOption<Duration> REQUEST_TIMEOUT =
      durationOption("faro.network.request.timeout", "120s", Duration.ofMillis(100),
          "How long to wait for the answer to one request before failing it with TIMEOUT.");
  public static final ConfigOption<Long> MAX_FRAME_SIZE =
      sizeOption("faro.network.max.frame.size", "128m", 64 * 1024, Integer.MAX_VALUE,
          "Largest frame accepted, checked before any buffer is allocated. Must exceed the "
              + "largest push frame and the largest fetched chunk.");

  public static final List<ConfigOption<?>> ALL =
      List.of(IO_THREADS, CONNECT_TIMEOUT, REQUEST_TIMEOUT, MAX_FRAME_SIZE);

  private NetworkOptions() {}

  /** The typed network settings of one process. */
  public record Settings(int ioThreads, Duration connectTimeout, Duration requestTimeout, int maxFrameSize) {
    public static Settings from(FaroConf conf) {
      int threads = conf.get(IO_THREADS);
      return new Settings(
          threads == 0 ? Runtime.getRuntime().availableProcessors() : threads,
          conf.get(CONNECT_TIMEOUT),
          conf.get(REQUEST_TIMEOUT),
          (int) (long) conf.get(MAX_FRAME_SIZE));
    }
  }
}
