package io.faro.spark;

import io.faro.client.ClientOptionGroup;
import io.faro.client.ClientOptions;
import io.faro.client.ClientWarmUp;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.common.config.CommonOptionGroup;
import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.config.KnownKeys;
import io.faro.common.id.AppId;
import io.faro.common.log.LogSafe;
import io.faro.common.network.ClientPool;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.MapOutputTracker;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * Spark's entry point to Faro (Spark 3.5 and 4.x: see {@link SparkLine}): set {@code
 * spark.shuffle.manager=io.faro.spark.FaroShuffleManager} and {@code spark.faro.master.endpoints}.
 * Every {@code spark.faro.X} setting is Faro's {@code faro.X}.
 *
 * <p>One instance per JVM (Spark's SparkEnv). The driver lazily starts the {@link LifecycleManager}
 * at the first shuffle; every JVM lazily starts one {@link ShuffleClient}. Both share one
 * connection pool, so threads and connections do not grow with shuffles. When the Faro cluster
 * cannot be reached, shuffles fail with an error that says so: Faro never falls back to Spark's
 * built-in shuffle behind the user's back.
 */
public final class FaroShuffleManager implements ShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(FaroShuffleManager.class);
  private static final String SPARK_PREFIX = "spark.";

  private final SparkConf sparkConf;
  private final ClientOptions.Settings settings;
  private final ShuffleBlockResolver resolver = new FaroShuffleBlockResolver();
  private final Object lock = new Object();
  // @GuardedBy("lock"): created on first use, closed by stop().
  private ClientPool pool;
  private LifecycleManager lifecycle;
  private ShuffleClient client;
  private boolean stageListenerAdded;
  private boolean stopped;

  public FaroShuffleManager(SparkConf conf, boolean isDriver) {
    this.sparkConf = conf;
    this.settings = settings(conf);
    if (isDriver && conf.getBoolean("spark.shuffle.service.enabled", false)) {
      LOG.warn(
          "spark.shuffle.service.enabled=true: Faro does not use Spark's external shuffle "
              + "service; set it to false (Faro keeps shuffle data on Faro workers)");
    }
    if (isDriver) {
      DriverSettings.checkClassLoading(conf, DriverSettings.ownJar());
      DriverSettings.declareShuffleDataOutsideExecutors(conf);
    }
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
  static ClientOptions.Settings settings(SparkConf conf) {
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
    try {
      FaroConf faro = FaroConf.of(values);
      checkClientKeys(notClientKeys, clientKeys, faro.get(KnownKeys.STRICT));
      return ClientOptions.Settings.from(faro);
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

  private ClientPool pool() {
    synchronized (lock) {
      checkNotStopped();
      if (pool == null) {
        pool = new ClientPool("faro-client", settings.network());
      }
      return pool;
    }
  }

  private LifecycleManager lifecycle() {
    synchronized (lock) {
      checkNotStopped();
      if (lifecycle == null) {
        String appId = sparkConf.get("spark.app.id");
        String attempt = sparkConf.get("spark.app.attempt.id", "");
        // Spark's ids are predictable (YARN numbers them): eight random hex characters make Faro's
        // unguessable, so that nobody can register an app's id before the app does.
        String suffix =
            java.util.HexFormat.of().toHexDigits(new java.security.SecureRandom().nextInt());
        lifecycle =
            new LifecycleManager(
                new AppId((attempt.isEmpty() ? appId : appId + "_" + attempt) + "-" + suffix),
                settings,
                pool(),
                lifecycleHost());
        // Lost data: Spark forgets every map output of the shuffle, so that the fetch failure the
        // reducer throws next re-runs the whole map stage (into a new generation).
        lifecycle.onShuffleLost(
            shuffleId -> {
              MapOutputTracker tracker = SparkEnv.get().mapOutputTracker();
              if (tracker instanceof MapOutputTrackerMaster master) {
                master.unregisterAllMapAndMergeOutput(shuffleId);
                LOG.warn(
                    "Faro lost data of shuffle {}: its map outputs are unregistered and its map stage runs again",
                    shuffleId);
              }
            });
      }
      return lifecycle;
    }
  }

  private String lifecycleHost() {
    if (!settings.lifecycleHost().isEmpty()) {
      return settings.lifecycleHost();
    }
    try {
      return sparkConf.get("spark.driver.host", InetAddress.getLocalHost().getHostName());
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }

  /**
   * Nothing is started once the manager stopped: what it started then would never be closed.
   *
   * @throws IllegalStateException once it stopped (only a late warm-up should see it)
   */
  // @GuardedBy("lock")
  private void checkNotStopped() {
    if (stopped) {
      throw new IllegalStateException("Faro's shuffle manager of this JVM was stopped");
    }
  }

  /** This JVM's client, started on first use; see {@link #checkNotStopped}. */
  ShuffleClient client() {
    synchronized (lock) {
      checkNotStopped();
      if (client == null) {
        client = new ShuffleClient(pool(), settings);
      }
      return client;
    }
  }

  @Override
  public <K, V, C> ShuffleHandle registerShuffle(
      int shuffleId, ShuffleDependency<K, V, C> dependency) {
    LifecycleManager manager = lifecycle();
    addStageListener(dependency.rdd().sparkContext());
    manager.registerShuffle(
        shuffleId, dependency.rdd().getNumPartitions(), dependency.partitioner().numPartitions());
    return new FaroShuffleHandle<>(
        shuffleId,
        dependency,
        manager.app().value(),
        manager.endpoint(),
        dependency.rdd().getNumPartitions(),
        manager.credentials());
  }

  /**
   * Tells the lifecycle manager of every stage attempt that ends with success (see {@link
   * LifecycleManager#stageAttemptEnded}); added once, on the driver, at the first shuffle.
   */
  private void addStageListener(SparkContext context) {
    synchronized (lock) {
      if (stageListenerAdded) {
        return;
      }
      stageListenerAdded = true;
    }
    context.addSparkListener(
        new SparkListener() {
          @Override
          public void onStageCompleted(SparkListenerStageCompleted event) {
            StageInfo stage = event.stageInfo();
            if (stage.failureReason().isDefined()) {
              return;
            }
            LifecycleManager current;
            synchronized (lock) {
              current = lifecycle;
            }
            if (current != null) {
              current.stageAttemptEnded(stage.stageId(), stage.attemptNumber());
            }
          }
        });
  }

  @Override
  public <K, V> ShuffleWriter<K, V> getWriter(
      ShuffleHandle handle, long mapId, TaskContext context, ShuffleWriteMetricsReporter metrics) {
    FaroShuffleHandle<K, V, Object> faro = faroHandle(handle);
    return new FaroShuffleWriter<>(faro, context, metrics, authenticatedClient(faro));
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
    FaroShuffleHandle<K, Object, C> faro = faroHandle(handle);
    ShuffleClient client = authenticatedClient(faro);
    return new FaroShuffleReader<>(
        faro, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics, client);
  }

  /**
   * This JVM's client, its connections proving the app's identity when the handle carries one (an
   * executor learns it from the first handle it sees; the driver's pool already proves it).
   */
  private ShuffleClient authenticatedClient(FaroShuffleHandle<?, ?, ?> handle) {
    ShuffleClient shuffleClient = client();
    handle
        .credentials()
        .ifPresent(
            credentials -> {
              ClientPool clients = pool();
              if (!clients.credentials().identity().equals(credentials.identity())) {
                clients.authenticateAs(credentials);
              }
            });
    return shuffleClient;
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
    synchronized (lock) {
      if (lifecycle != null) {
        lifecycle.unregisterShuffle(shuffleId);
      }
      if (client != null) {
        client.forget(shuffleId);
      }
    }
    return true;
  }

  @Override
  public ShuffleBlockResolver shuffleBlockResolver() {
    return resolver;
  }

  @Override
  public void stop() {
    synchronized (lock) {
      stopped = true;
      if (lifecycle != null) {
        lifecycle.close();
        lifecycle = null;
      }
      client = null;
      if (pool != null) {
        pool.close();
        pool = null;
      }
    }
  }
}
