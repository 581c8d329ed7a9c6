package io.faro.spark;

import io.faro.client.ClientOptionGroup;
import io.faro.client.ClientOptions;
import io.faro.client.ClientWarmUp;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.common.admission.AppProfile;
import io.faro.common.auth.AuthOptions;
import io.faro.common.config.CommonOptionGroup;
import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.config.KnownKeys;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.log.LogSafe;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.apache.spark.util.Utils;
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
 * connection pool, so threads and connections do not grow with shuffles.
 *
 * <p>When Faro cannot carry a shuffle (see {@link ClientOptions#FALLBACK_POLICY}), the driver
 * decides as Spark registers it: under {@code auto} that shuffle goes to Spark's own sort shuffle
 * manager, which this one holds and hands every non-Faro handle to, with the reason logged and
 * posted as a {@link FaroShuffleFallback} event; under {@code never} the job fails with it. Never
 * silently: a job may mix both kinds of shuffle, and says which ran where.
 *
 * <p>Over 400 lines because it is Spark's one entry point and must hold every decision Spark asks
 * of a shuffle manager: the per-shuffle choice between Faro and the built-in manager (with its
 * reasons), the app's registration and its retry, and the routing of each handle. Spark's own
 * settings live in {@link DriverSettings}; what is left shares one lock and one life cycle.
 */
public final class FaroShuffleManager implements ShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(FaroShuffleManager.class);
  private static final String SPARK_PREFIX = "spark.";

  /** How long an application whose registration failed waits before it tries again. */
  private static final long REGISTRATION_RETRY_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final SparkConf sparkConf;
  private final ClientOptions.Settings settings;

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

  private final Object lock = new Object();
  // @GuardedBy("lock"): created on first use, closed by stop().
  private ClientPool pool;
  private LifecycleManager lifecycle;
  private ShuffleClient client;
  private boolean stageListenerAdded;
  private boolean stopped;
  // @GuardedBy("lock"): the app's last failed registration (policy auto), and whether a
  // registration runs in the background.
  private RuntimeException registrationFailure;
  private long registrationFailedAtNanos;
  private boolean registering;

  public FaroShuffleManager(SparkConf conf, boolean isDriver) {
    this.sparkConf = conf;
    this.settings = settings(conf);
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

  /**
   * The driver's lifecycle manager, registering the app at the first call (for at most
   * faro.client.fallback.connect.timeout). Under policy never every call registers until one
   * succeeds. Under auto a failed registration is answered again without waiting, and tried again
   * in the background at most once a minute: the shuffles registered meanwhile fall back at once.
   */
  private LifecycleManager lifecycle() {
    synchronized (lock) {
      checkNotStopped();
      if (lifecycle != null) {
        return lifecycle;
      }
      if (registrationFailure != null
          && settings.fallbackPolicy() != ClientOptions.FallbackPolicy.NEVER) {
        if (!registering
            && System.nanoTime() - registrationFailedAtNanos >= REGISTRATION_RETRY_NANOS) {
          registering = true;
          Thread retry = new Thread(this::registerInBackground, "faro-app-registration");
          retry.setDaemon(true);
          retry.start();
        }
        throw registrationFailure;
      }
      try {
        lifecycle = newLifecycle();
        return lifecycle;
      } catch (RuntimeException e) {
        registrationFailure = e;
        registrationFailedAtNanos = System.nanoTime();
        throw e;
      }
    }
  }

  /** One registration attempt off the lock; the shuffles registered after it use its outcome. */
  private void registerInBackground() {
    LifecycleManager registered = null;
    RuntimeException failure = null;
    try {
      registered = newLifecycle();
    } catch (RuntimeException e) {
      failure = e;
    }
    synchronized (lock) {
      registering = false;
      if (registered != null && (stopped || lifecycle != null)) {
        registered.close();
      } else if (registered != null) {
        lifecycle = registered;
        registrationFailure = null;
        LOG.warn("Faro registered the application; its next shuffles go through Faro");
      } else {
        registrationFailure = failure;
        registrationFailedAtNanos = System.nanoTime();
      }
    }
  }

  // @GuardedBy("lock")
  private LifecycleManager newLifecycle() {
    String appId = sparkConf.get("spark.app.id");
    String attempt = sparkConf.get("spark.app.attempt.id", "");
    // Spark's ids are predictable (YARN numbers them): eight random hex characters make Faro's
    // unguessable, so that nobody can register an app's id before the app does.
    String suffix = HexFormat.of().toHexDigits(new SecureRandom().nextInt());
    // What the masters' admission rules judge: Spark's user, YARN queue and application name.
    AppProfile profile =
        new AppProfile(
            Utils.getCurrentUserName(),
            sparkConf.get("spark.yarn.queue", ""),
            sparkConf.get("spark.app.name", ""));
    LifecycleManager manager =
        new LifecycleManager(
            new AppId((attempt.isEmpty() ? appId : appId + "_" + attempt) + "-" + suffix),
            profile,
            settings,
            pool(),
            lifecycleHost());
    // Lost data: Spark forgets every map output of the shuffle, so that the fetch failure the
    // reducer throws next re-runs the whole map stage (into a new generation).
    manager.onShuffleLost(
        shuffleId -> {
          MapOutputTracker tracker = SparkEnv.get().mapOutputTracker();
          if (tracker instanceof MapOutputTrackerMaster master) {
            master.unregisterAllMapAndMergeOutput(shuffleId);
            LOG.warn(
                "Faro lost data of shuffle {}: its map outputs are unregistered and its map stage runs again",
                shuffleId);
          }
        });
    // A stage Spark rolls back runs every map again while Faro still holds their first outputs
    // (see LifecycleManager.engineOutputs): Spark's tracker tells how many it still holds.
    manager.engineOutputs(
        shuffleId -> {
          SparkEnv env = SparkEnv.get();
          return env != null && env.mapOutputTracker() instanceof MapOutputTrackerMaster master
              ? master.getNumAvailableOutputs(shuffleId)
              : -1;
        });
    return manager;
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
    ClientOptions.FallbackPolicy policy = settings.fallbackPolicy();
    int maps = dependency.rdd().getNumPartitions();
    int partitions = dependency.partitioner().numPartitions();
    if (policy == ClientOptions.FallbackPolicy.ALWAYS) {
      return fallBack(
          shuffleId,
          dependency,
          FaroShuffleFallback.Kind.POLICY,
          "faro.client.fallback.policy=always",
          null);
    }
    if (unsafeSetting != null) {
      return fallBack(
          shuffleId, dependency, FaroShuffleFallback.Kind.UNSAFE_SETTING, unsafeSetting, null);
    }
    if (partitions > settings.fallbackMaxPartitions()) {
      return fallBack(
          shuffleId,
          dependency,
          FaroShuffleFallback.Kind.PARTITIONS,
          partitions
              + " partitions, more than faro.client.fallback.max.partitions ("
              + settings.fallbackMaxPartitions()
              + ")",
          null);
    }
    LifecycleManager manager;
    try {
      manager = lifecycle();
    } catch (RuntimeException e) {
      boolean refused = e instanceof FaroException fe && fe.code() == ErrorCode.ADMISSION_REFUSED;
      return fallBack(
          shuffleId,
          dependency,
          refused ? FaroShuffleFallback.Kind.REFUSED : FaroShuffleFallback.Kind.MASTERS_UNREACHABLE,
          e.getMessage(),
          e);
    }
    addStageListener(dependency.rdd().sparkContext());
    boolean auto = policy == ClientOptions.FallbackPolicy.AUTO;
    if (auto && !manager.mastersReachable()) {
      return fallBack(
          shuffleId,
          dependency,
          FaroShuffleFallback.Kind.MASTERS_UNREACHABLE,
          "the application's last heartbeat reached none of the masters "
              + settings.masters()
              + " (faro.master.endpoints)",
          null);
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
      boolean quota = codeIn(e) == ErrorCode.QUOTA_EXCEEDED;
      return fallBack(
          shuffleId,
          dependency,
          quota ? FaroShuffleFallback.Kind.QUOTA : FaroShuffleFallback.Kind.NOT_PLACED,
          (quota ? "over a quota of the Faro cluster: " : "the Faro cluster did not place it: ")
              + e.getMessage(),
          null);
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

  /** The code of the first Faro error in {@code e}'s causes, or null. */
  private static ErrorCode codeIn(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof FaroException fe) {
        return fe.code();
      }
    }
    return null;
  }

  /**
   * Spark's built-in shuffle for {@code shuffleId}, for a reason of {@code kind}: logged once,
   * counted and posted on the driver's listener bus under policy auto or always; under never, the
   * job fails at once with the reason instead.
   */
  private <K, V, C> ShuffleHandle fallBack(
      int shuffleId,
      ShuffleDependency<K, V, C> dependency,
      FaroShuffleFallback.Kind kind,
      String reason,
      RuntimeException cause) {
    ClientOptions.FallbackPolicy policy = settings.fallbackPolicy();
    String name = policy.name().toLowerCase(Locale.ROOT);
    if (policy == ClientOptions.FallbackPolicy.NEVER) {
      throw new FaroException(
          switch (kind) {
            case PARTITIONS -> ErrorCode.LIMIT_EXCEEDED;
            case REFUSED -> ErrorCode.ADMISSION_REFUSED;
            case QUOTA -> ErrorCode.QUOTA_EXCEEDED;
            default -> ErrorCode.CONNECTION_FAILED;
          },
          "Faro cannot carry shuffle "
              + shuffleId
              + " and spark.faro.client.fallback.policy is never (auto would use Spark's"
              + " built-in shuffle for it): "
              + reason,
          cause);
    }
    LOG.warn(
        "Shuffle {} uses Spark's built-in shuffle, not Faro (spark.faro.client.fallback.policy={}):"
            + " {}",
        shuffleId,
        name,
        reason);
    fallbacks.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
    liveFallbacks.add(shuffleId);
    dependency
        .rdd()
        .sparkContext()
        .listenerBus()
        .post(new FaroShuffleFallback(shuffleId, name, kind, reason));
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
    if (!isFaro(handle)) {
      return builtin.getWriter(handle, mapId, context, metrics);
    }
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
    if (!isFaro(handle)) {
      return builtin.getReader(
          handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
    }
    FaroShuffleHandle<K, Object, C> faro = faroHandle(handle);
    ShuffleClient client = authenticatedClient(faro);
    return new FaroShuffleReader<>(
        faro, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics, client);
  }

  /**
   * This JVM's client, its connections proving the app's identity the handle carries: to every
   * master and worker when the cluster authenticates applications, else to the driver's lifecycle
   * port only (an executor learns it from the first handle it sees; the driver's pool already
   * proves it).
   */
  private ShuffleClient authenticatedClient(FaroShuffleHandle<?, ?, ?> handle) {
    ShuffleClient shuffleClient = client();
    ClientPool clients = pool();
    AuthOptions.Credentials credentials = handle.credentials();
    if (handle.clusterAuthenticates()) {
      if (!clients.credentials().identity().equals(credentials.identity())) {
        clients.authenticateAs(credentials);
      }
    } else if (!clients.credentials(handle.lifecycle()).identity().equals(credentials.identity())) {
      clients.authenticateAs(handle.lifecycle(), credentials);
    }
    return shuffleClient;
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
    synchronized (lock) {
      if (lifecycle != null) {
        lifecycle.unregisterShuffle(shuffleId);
      }
      if (client != null) {
        client.forget(shuffleId);
      }
    }
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
