package io.faro.spark;

import io.faro.client.ClientOptionGroup;
import io.faro.client.ClientOptions;
import io.faro.client.ClientSettings;
import io.faro.client.ClientWarmUp;
import io.faro.client.ReadRange;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.common.config.CommonOptionGroup;
import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.config.KnownKeys;
import io.faro.common.log.LogSafe;
import io.faro.common.network.Futures;
import io.faro.spark.FallbackDecision.Fallback;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * Spark's entry point to Faro (Spark 3.5 and 4.x: see {@link SparkLine}): set {@code
 * spark.shuffle.manager=io.faro.spark.FaroShuffleManager} and {@code spark.faro.master.endpoints}.
 * Every {@code spark.faro.X} setting is Faro's {@code faro.X}.
 *
 * <p>One instance per JVM (Spark's SparkEnv). What it runs of Faro (one connection pool, this JVM's
 * {@link ShuffleClient}, the driver's {@link LifecycleManager}) is {@link FaroApplication}'s,
 * started on first use; this class routes Spark's calls.
 *
 * <p>When Faro cannot carry a shuffle (see {@link ClientOptions#FALLBACK_POLICY}), the driver
 * decides as Spark registers it: under {@code auto} that shuffle goes to Spark's own sort shuffle
 * manager, which this one holds and hands every non-Faro handle to, with the reason logged and
 * posted as a {@link FaroShuffleFallback} event; under {@code never} the job fails with it. Never
 * silently: a job may mix both kinds of shuffle, and says which ran where.
 *
 * <p>Which shuffles Faro carries is {@link FallbackDecision}'s; Spark's own settings are {@link
 * DriverSettings}'.
 */
public final class FaroShuffleManager implements ShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(FaroShuffleManager.class);
  private static final String SPARK_PREFIX = "spark.";

  private final ClientSettings settings;

  /** Spark's own shuffle manager, for the shuffles Faro does not carry. */
  private final SortShuffleManager builtin;

  /**
   * Why Faro must not carry any of this application's shuffles (a setting that makes it unsafe), or
   * null; the driver's only.
   */
  private final String unsafeSetting;

  /** Shuffles that fell back, by kind of reason; the driver's. */
  private final Map<FaroShuffleFallback.Kind, AtomicInteger> fallbacks = new ConcurrentHashMap<>();

  private final AtomicInteger carried = new AtomicInteger();

  /** Shuffles that fell back and are not unregistered yet: their files live on executors. */
  private final Set<Integer> liveFallbacks = ConcurrentHashMap.newKeySet();

  /** The pool, client and (on the driver) lifecycle manager this JVM runs. */
  private final FaroApplication application;

  public FaroShuffleManager(SparkConf conf, boolean isDriver) {
    this.settings = settings(conf);
    this.application = new FaroApplication(conf, settings);
    ClientOptions.FallbackPolicy policy = settings.fallbackPolicy();
    if (isDriver
        && conf.getBoolean("spark.shuffle.service.enabled", false)
        && policy == ClientOptions.FallbackPolicy.NEVER) {
      LOG.warn(
          "spark.shuffle.service.enabled=true: Faro does not use Spark's external shuffle "
              + "service, and with faro.client.fallback.policy=never no shuffle falls back to "
              + "it; set it to false (Faro keeps shuffle data on Faro workers)");
    }
    String unsafe = null;
    if (isDriver) {
      try {
        DriverSettings.checkClassLoading(conf, DriverSettings.ownJar());
      } catch (IllegalArgumentException e) {
        if (policy == ClientOptions.FallbackPolicy.NEVER) {
          throw e;
        }
        unsafe = e.getMessage();
      }
      DriverSettings.declareShuffleDataOutsideExecutors(conf, policy);
      DriverSettings.turnOffPushBasedShuffle(conf);
    }
    this.unsafeSetting = unsafe;
    this.builtin = new SortShuffleManager(conf);
    warmUp();
  }

  /**
   * Starts, on a daemon thread, what this JVM's first shuffle would otherwise start on a task's
   * thread: the connection pool and client, the wire messages, the batch codec ({@link
   * ClientWarmUp}). Spark builds the shuffle manager when the JVM starts, before its first task, so
   * a job does not wait for it (a fresh JVM's first shuffling query, median of 3: 2672 ms without
   * it, 2437 ms with it, 2058 ms with the built-in shuffle; docs/benchmarks.md).
   */
  private void warmUp() {
    Thread thread =
        new Thread(
            () -> {
              try {
                client();
                ClientWarmUp.run(settings.codec());
              } catch (Throwable e) {
                // Never past this thread (an executor's uncaught-exception handler would exit
                // the JVM): the first shuffle then does it, and fails with its own error if it
                // must.
                LOG.warn(
                    "Faro's client warm-up failed; the first shuffle does it: {}", e.toString());
              }
            },
            "faro-client-warmup");
    thread.setDaemon(true);
    thread.start();
  }

  public FaroShuffleManager(SparkConf conf) {
    this(conf, false);
  }

  /**
   * Maps {@code spark.faro.X} to {@code faro.X} and validates it, naming the Spark key on error. A
   * key that is not a client setting is warned about with the closest one (refused with {@code
   * spark.faro.config.strict=true}): in Spark only the client's keys mean anything.
   */
  static ClientSettings settings(SparkConf conf) {
    KnownKeys clientKeys = new KnownKeys(List.of(new CommonOptionGroup(), new ClientOptionGroup()));
    Map<String, String> values = new HashMap<>();
    List<String> notClientKeys = new ArrayList<>();
    for (Tuple2<String, String> kv : conf.getAllWithPrefix(SPARK_PREFIX + "faro.")) {
      String key = "faro." + kv._1();
      if (!clientKeys.keys().contains(key)) {
        notClientKeys.add(key);
      }
      values.put(key, kv._2());
    }
    // The lifecycle port listens where Spark's own driver port does: spark.driver.bindAddress
    // when set (a container's own address, when spark.driver.host names a service), else the host
    // executors reach the driver at.
    String bindAddress = conf.get("spark.driver.bindAddress", "");
    if (!bindAddress.isBlank()) {
      values.putIfAbsent(ClientOptions.LIFECYCLE_BIND_HOST.key(), bindAddress.trim());
    }
    try {
      FaroConf faro = FaroConf.of(values);
      checkClientKeys(notClientKeys, clientKeys, faro.get(KnownKeys.STRICT));
      return ClientSettings.from(faro);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(
          e.getMessage().replace(" for faro.", " for spark.faro."), e);
    }
  }

  private static void checkClientKeys(List<String> keys, KnownKeys clientKeys, boolean strict) {
    if (keys.isEmpty()) {
      return;
    }
    List<String> described =
        keys.stream()
            .sorted()
            .map(
                k ->
                    SPARK_PREFIX
                        + LogSafe.id(k)
                        + clientKeys
                            .closest(k)
                            .map(c -> " (did you mean " + SPARK_PREFIX + c + "?)")
                            .orElse(""))
            .toList();
    if (strict) {
      throw new ConfigException(
          "Not Faro client settings: "
              + String.join(", ", described)
              + ". Fix or remove them (every key is in docs/configuration.md), or set spark."
              + KnownKeys.STRICT.key()
              + " to false to only warn");
    }
    described.forEach(
        d -> LOG.warn("Ignoring {}: not a Faro client setting (see docs/configuration.md)", d));
  }

  /** This JVM's client, started on first use. */
  ShuffleClient client() {
    return application.client();
  }

  @Override
  public <K, V, C> ShuffleHandle registerShuffle(
      int shuffleId, ShuffleDependency<K, V, C> dependency) {
    ClientOptions.FallbackPolicy policy = settings.fallbackPolicy();
    int maps = dependency.rdd().getNumPartitions();
    int partitions = dependency.partitioner().numPartitions();
    Optional<Fallback> early =
        FallbackDecision.beforeMasters(
            policy, unsafeSetting, partitions, settings.fallbackMaxPartitions());
    if (early.isPresent()) {
      return fallBack(shuffleId, dependency, early.get());
    }
    LifecycleManager manager;
    try {
      manager = application.lifecycle();
    } catch (RuntimeException e) {
      return fallBack(shuffleId, dependency, FallbackDecision.notRegistered(e));
    }
    application.addStageListener(dependency.rdd().sparkContext());
    Optional<Fallback> unreachable =
        FallbackDecision.afterHeartbeat(policy, manager.mastersReachable(), settings.masters());
    if (unreachable.isPresent()) {
      return fallBack(shuffleId, dependency, unreachable.get());
    }
    // A shuffle too wide to place whole now has its first page placed, to find out.
    CompletableFuture<Void> placed = manager.registerShuffle(shuffleId, maps, partitions, true);
    // The placement at registration, which the map tasks would wait for anyway, decides: under
    // auto whether the shuffle falls back, under never whether the job fails at once (a quota,
    // no worker with room) rather than in its first map tasks.
    try {
      Futures.await(
          placed,
          settings.fallbackConnectTimeout(),
          "the placement of shuffle " + shuffleId + " (faro.client.fallback.connect.timeout)");
    } catch (RuntimeException e) {
      manager.unregisterShuffle(shuffleId);
      return fallBack(shuffleId, dependency, FallbackDecision.notPlaced(e));
    }
    carried.incrementAndGet();
    return new FaroShuffleHandle<>(
        shuffleId,
        dependency,
        manager.app().value(),
        manager.endpoint(),
        maps,
        manager.credentials(),
        manager.clusterAuthenticates());
  }

  /**
   * Spark's built-in shuffle for {@code shuffleId}, for a reason of {@code kind}: logged once,
   * counted and posted on the driver's listener bus under policy auto or always; under never, the
   * job fails at once with the reason instead.
   */
  private <K, V, C> ShuffleHandle fallBack(
      int shuffleId, ShuffleDependency<K, V, C> dependency, Fallback fallback) {
    ClientOptions.FallbackPolicy policy = settings.fallbackPolicy();
    if (policy == ClientOptions.FallbackPolicy.NEVER) {
      throw FallbackDecision.refusal(shuffleId, fallback);
    }
    String name = policy.name().toLowerCase(Locale.ROOT);
    LOG.warn(
        "Shuffle {} uses Spark's built-in shuffle, not Faro (spark.faro.client.fallback.policy={}):"
            + " {}",
        shuffleId,
        name,
        fallback.reason());
    fallbacks.computeIfAbsent(fallback.kind(), k -> new AtomicInteger()).incrementAndGet();
    liveFallbacks.add(shuffleId);
    dependency
        .rdd()
        .sparkContext()
        .listenerBus()
        .post(new FaroShuffleFallback(shuffleId, name, fallback.kind(), fallback.reason()));
    return builtin.registerShuffle(shuffleId, dependency);
  }

  /**
   * Whether no shuffle that fell back is live: only then is the shuffle data of every live shuffle
   * outside executors (see {@link FaroShuffleDataIO}).
   */
  boolean noLiveFallbacks() {
    return liveFallbacks.isEmpty();
  }

  /** Shuffles of this application that fell back, by kind of reason (the driver's count). */
  public Map<FaroShuffleFallback.Kind, Integer> fallbacks() {
    Map<FaroShuffleFallback.Kind, Integer> counts = new EnumMap<>(FaroShuffleFallback.Kind.class);
    fallbacks.forEach((k, v) -> counts.put(k, v.get()));
    return counts;
  }

  @Override
  public <K, V> ShuffleWriter<K, V> getWriter(
      ShuffleHandle handle, long mapId, TaskContext context, ShuffleWriteMetricsReporter metrics) {
    if (!isFaro(handle)) {
      return builtin.getWriter(handle, mapId, context, metrics);
    }
    FaroShuffleHandle<K, V, Object> faro = faroHandle(handle);
    return new FaroShuffleWriter<>(faro, context, metrics, application.authenticatedClient(faro));
  }

  @Override
  public <K, C> ShuffleReader<K, C> getReader(
      ShuffleHandle handle,
      int startMapIndex,
      int endMapIndex,
      int startPartition,
      int endPartition,
      TaskContext context,
      ShuffleReadMetricsReporter metrics) {
    if (!isFaro(handle)) {
      return builtin.getReader(
          handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
    }
    FaroShuffleHandle<K, Object, C> faro = faroHandle(handle);
    ShuffleClient client = application.authenticatedClient(faro);
    return new FaroShuffleReader<>(
        faro,
        new ReadRange(startPartition, endPartition, startMapIndex, endMapIndex),
        context,
        metrics,
        client);
  }

  /**
   * Whether {@code handle} is of a shuffle Faro carries: a Faro handle, or one of that name from
   * another class loader (an error, see {@link #faroHandle}); any other is Spark's own, of a
   * shuffle that fell back.
   */
  private static boolean isFaro(ShuffleHandle handle) {
    return handle instanceof FaroShuffleHandle<?, ?, ?>
        || handle.getClass().getName().equals(FaroShuffleHandle.class.getName());
  }

  @SuppressWarnings("unchecked")
  private static <K, V, C> FaroShuffleHandle<K, V, C> faroHandle(ShuffleHandle handle) {
    if (handle instanceof FaroShuffleHandle<?, ?, ?> h) {
      return (FaroShuffleHandle<K, V, C>) h;
    }
    // Seen in the field with spark.executor.userClassPathFirst=true: the handle's class came from
    // another class loader. Fail loudly rather than shuffle some other way.
    throw new IllegalStateException(
        "shuffle handle "
            + handle
            + " of class "
            + handle.getClass().getName()
            + " (loader "
            + handle.getClass().getClassLoader()
            + ") is not a Faro handle of loader "
            + FaroShuffleHandle.class.getClassLoader()
            + "; is the Faro jar on the classpath twice, "
            + "or spark.executor.userClassPathFirst=true?");
  }

  @Override
  public boolean unregisterShuffle(int shuffleId) {
    application.unregisterShuffle(shuffleId);
    // Its files, if it fell back (nothing if not).
    builtin.unregisterShuffle(shuffleId);
    liveFallbacks.remove(shuffleId);
    return true;
  }

  /**
   * Spark's own resolver: executors serve (and, when decommissioned, migrate) the files of the
   * shuffles that fell back; no block of a Faro shuffle is ever asked of an executor.
   */
  @Override
  public ShuffleBlockResolver shuffleBlockResolver() {
    return builtin.shuffleBlockResolver();
  }

  @Override
  public void stop() {
    if (!fallbacks.isEmpty()) {
      LOG.warn(
          "Faro carried {} shuffles of this application; {} used Spark's built-in shuffle: {}",
          carried.get(),
          fallbacks.values().stream().mapToInt(AtomicInteger::get).sum(),
          fallbacks());
    }
    builtin.stop();
    application.close();
  }
}
