package io.faro.testing;

import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.intOption;

import io.faro.common.config.ConfigOption;
import java.time.Duration;
import java.util.List;

/**
 * The keys of the faro-testing module's {@link FaultInjection}, under {@code faro.testing.}: read
 * only by a worker whose class path holds this module, which only tests' class paths do (and
 * bench/slow-disk.sh's, through FARO_CLASSPATH). A worker without it ignores them; strict config
 * lets them through there ({@code faro.testing.} is one of {@link
 * io.faro.common.config.KnownKeys#MODULE_NAMESPACES}). Both are off by default.
 */
public final class TestingOptions {
  public static final ConfigOption<Integer> DROP_PER_MILLE =
      intOption(
          "faro.testing.drop.connections.per.mille",
          0,
          0,
          1000,
          "per mille",
          "For fault tests only (the faro-testing module): of every 1000 requests on a worker's "
              + "push and fetch ports, close the connection on about this many, half before "
              + "handling the request and half after (its answer lost). 0 (the default) drops "
              + "nothing.");

  public static final ConfigOption<Duration> SLOW_DISK_DELAY =
      durationOption(
          "faro.testing.slow.disk.delay.per.mib",
          "0ms",
          Duration.ZERO,
          "For tests only (the faro-testing module): every MiB written to a worker's disk whose "
              + "directory holds a file named "
              + FaultInjection.SLOW_DISK_FILE
              + " takes this much longer (the file is looked for at each disk check), so that a "
              + "test can slow one disk down and let it recover. 0 (the default) slows nothing.");

  public static final List<ConfigOption<?>> ALL = List.of(DROP_PER_MILLE, SLOW_DISK_DELAY);

  private TestingOptions() {}
}
