package io.faro.common.master;

import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.listOption;

import io.faro.common.config.ConfigOption;
import io.faro.common.network.HostPort;
import java.time.Duration;
import java.util.List;

/** How any process (worker, lifecycle manager, admin tool) reaches the masters. */
public final class MasterOptions {
  public static final ConfigOption<List<HostPort>> ENDPOINTS =
      listOption(
          "faro.master.endpoints",
          "localhost:9097",
          HostPort::parse,
          false,
          "host:port",
          "RPC endpoints of every master. Clients and workers find the leader among them.");
  public static final ConfigOption<Duration> RETRY_TIMEOUT =
      durationOption(
          "faro.master.client.retry.timeout",
          "60s",
          Duration.ofMillis(100),
          "How long a call to the masters keeps retrying (unreachable master, leader election) "
              + "before it fails.");

  public static final ConfigOption<Duration> ATTEMPT_TIMEOUT =
      durationOption(
          "faro.master.client.attempt.timeout",
          "10s",
          Duration.ofMillis(100),
          "How long one master has to answer one call before the caller tries the next master. "
              + "A healthy master answers in milliseconds; this bounds the stall when a master "
              + "hangs (a stopped process, a machine that stopped answering) instead of dying.");

  public static final List<ConfigOption<?>> ALL =
      List.of(ENDPOINTS, RETRY_TIMEOUT, ATTEMPT_TIMEOUT);

  private MasterOptions() {}
}
