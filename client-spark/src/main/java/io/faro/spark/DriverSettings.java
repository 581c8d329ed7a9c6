package io.faro.spark;

import io.faro.client.ClientOptions;
import io.faro.common.log.LogSafe;
import java.security.CodeSource;
import java.util.Locale;
import java.util.Optional;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDataIO;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What Faro's shuffle manager checks and sets among Spark's own settings on the driver, before the
 * SparkContext reads them: that executors will not load Faro's classes twice, and that Spark knows
 * shuffle data outlives executors. The driver's settings reach its executors.
 */
final class DriverSettings {
  // The shuffle manager's logger: where users look for what Faro says about their settings.
  private static final Logger LOG = LoggerFactory.getLogger(FaroShuffleManager.class);

  private DriverSettings() {}

  static final String USER_CLASS_PATH_FIRST_KEY = "spark.executor.userClassPathFirst";

  /**
   * Fails the application at once, naming the settings, when its executors would load Faro's
   * classes twice: with {@code spark.executor.userClassPathFirst=true}, a Faro jar among the
   * application's jars ({@code spark.jars}, {@code --jars}) is loaded by the executors' user class
   * loader first, so the shuffle handles their tasks deserialize are of another class than the
   * shuffle manager's (loaded from {@code spark.executor.extraClassPath} when the executor
   * started), and every task would fail. With the jar only on the executors' class path the user
   * class loader finds no copy of its own and Faro carries the shuffle; nothing to refuse then.
   *
   * @param ownJar the file name of the jar this class was loaded from, if it came from one
   * @throws IllegalArgumentException naming both settings and what to change
   */
  static void checkClassLoading(SparkConf conf, Optional<String> ownJar) {
    if (!conf.getBoolean(USER_CLASS_PATH_FIRST_KEY, false)) {
      return;
    }
    for (String jar : conf.get("spark.jars", "").split(",")) {
      String name = jar.trim().substring(jar.trim().lastIndexOf('/') + 1);
      if (!name.isEmpty()
          && (name.startsWith("faro-client-spark") || ownJar.map(name::equals).orElse(false))) {
        throw new IllegalArgumentException(
            USER_CLASS_PATH_FIRST_KEY
                + "=true with Faro's jar in spark.jars ("
                + LogSafe.id(jar.trim())
                + "): executors would load Faro's classes twice and every shuffle task would "
                + "fail. Put the jar on spark.executor.extraClassPath only (and "
                + "spark.driver.extraClassPath), or set "
                + USER_CLASS_PATH_FIRST_KEY
                + "=false");
      }
    }
  }

  /** The file name of the jar this class came from, if a jar. */
  static Optional<String> ownJar() {
    try {
      CodeSource source = DriverSettings.class.getProtectionDomain().getCodeSource();
      if (source == null || source.getLocation() == null) {
        return Optional.empty();
      }
      String path = source.getLocation().getPath();
      String name = path.substring(path.lastIndexOf('/') + 1);
      return name.endsWith(".jar") ? Optional.of(name) : Optional.empty();
    } catch (SecurityException e) {
      return Optional.empty();
    }
  }

  static final String DATA_IO_KEY = "spark.shuffle.sort.io.plugin.class";
  static final String SHUFFLE_TRACKING_KEY = "spark.dynamicAllocation.shuffleTracking.enabled";

  /**
   * Tells Spark, before its context reads them, that shuffle data lives outside executors, so that
   * dynamic allocation needs no external shuffle service: {@link FaroShuffleDataIO} as the shuffle
   * data plugin (Spark then knows the storage is reliable). Whether Spark keeps executors for their
   * shuffles (shuffle tracking) depends on {@code policy}: a shuffle that falls back lives on the
   * executors that ran its maps, so under auto and always, with dynamic allocation and no external
   * shuffle service, tracking is turned on (Spark keeps every executor that ran a map task of a
   * live shuffle, Faro's too: it cannot tell them apart); under never it is turned off, and
   * executors go once idle. A value the user set is kept, with a warning where it defeats this. The
   * driver's settings reach its executors, so this is done on the driver only.
   */
  static void declareShuffleDataOutsideExecutors(
      SparkConf conf, ClientOptions.FallbackPolicy policy) {
    String plugin = conf.get(DATA_IO_KEY, "");
    if (plugin.isEmpty() || plugin.equals(LocalDiskShuffleDataIO.class.getName())) {
      conf.set(DATA_IO_KEY, FaroShuffleDataIO.class.getName());
    } else if (!plugin.equals(FaroShuffleDataIO.class.getName())) {
      LOG.warn(
          "{}={}: Spark does not know that Faro's shuffle data outlives executors, so dynamic "
              + "allocation needs the external shuffle service or keeps executors for their "
              + "shuffles; set it to {} or leave it unset",
          DATA_IO_KEY,
          LogSafe.id(plugin),
          FaroShuffleDataIO.class.getName());
    }
    boolean dynamic = conf.getBoolean("spark.dynamicAllocation.enabled", false);
    boolean service = conf.getBoolean("spark.shuffle.service.enabled", false);
    boolean mayFallBack = policy != ClientOptions.FallbackPolicy.NEVER;
    if (!conf.contains(SHUFFLE_TRACKING_KEY)) {
      boolean track = mayFallBack && dynamic && !service;
      conf.set(SHUFFLE_TRACKING_KEY, Boolean.toString(track));
      if (track) {
        LOG.warn(
            "{}=true: with dynamic allocation, no external shuffle service and "
                + "spark.faro.client.fallback.policy={}, a shuffle that falls back to Spark's "
                + "built-in shuffle keeps its files on executors, so Spark keeps the executors "
                + "that ran map tasks of a live shuffle. Set the policy to never to release them "
                + "once idle (Faro's shuffle data lives on Faro workers)",
            SHUFFLE_TRACKING_KEY,
            policy.name().toLowerCase(Locale.ROOT));
      }
    } else if (conf.getBoolean(SHUFFLE_TRACKING_KEY, false) && dynamic && !mayFallBack) {
      LOG.warn(
          "{}=true: dynamic allocation keeps every executor that ran a map task until its "
              + "shuffle is dropped, although Faro's shuffle data lives on Faro workers; set it "
              + "to false (or leave it unset) to release them",
          SHUFFLE_TRACKING_KEY);
    } else if (!conf.getBoolean(SHUFFLE_TRACKING_KEY, false)
        && dynamic
        && !service
        && mayFallBack) {
      LOG.warn(
          "{}=false with dynamic allocation, no external shuffle service and "
              + "spark.faro.client.fallback.policy={}: a shuffle that falls back to Spark's "
              + "built-in shuffle loses map outputs when Spark removes idle executors, and its "
              + "map stage runs again; set the policy to never, or leave {} unset",
          SHUFFLE_TRACKING_KEY,
          policy.name().toLowerCase(Locale.ROOT),
          SHUFFLE_TRACKING_KEY);
    }
  }

  static final String PUSH_BASED_SHUFFLE_KEY = "spark.shuffle.push.enabled";

  /**
   * Turns Spark's push-based shuffle (its own merge of map outputs on external shuffle services)
   * off: Faro carries the shuffle, and Spark would try to push a Faro map output's blocks from a
   * local file that does not exist.
   */
  static void turnOffPushBasedShuffle(SparkConf conf) {
    if (conf.getBoolean(PUSH_BASED_SHUFFLE_KEY, false)) {
      LOG.warn(
          "{}=true: Spark's push-based shuffle is turned off, Faro carries the shuffle",
          PUSH_BASED_SHUFFLE_KEY);
      conf.set(PUSH_BASED_SHUFFLE_KEY, "false");
    }
  }
}
