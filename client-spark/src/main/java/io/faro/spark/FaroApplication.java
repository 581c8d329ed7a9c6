package io.faro.spark;

import io.faro.client.ClientOptions;
import io.faro.client.ClientSettings;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.common.admission.AppProfile;
import io.faro.common.auth.AuthOptions;
import io.faro.common.id.AppId;
import io.faro.common.network.ClientPool;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.apache.spark.MapOutputTracker;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.util.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one JVM of a Spark application runs of Faro, started on first use and closed once: one
 * connection pool, this JVM's {@link ShuffleClient}, and on the driver the application's {@link
 * LifecycleManager} (its registration with the masters, retried in the background under policy
 * {@code auto}) and the listener that tells it of the stages that ended. Threads and connections do
 * not grow with shuffles.
 *
 * <p>Thread-safety: every method may be called from any thread; one lock guards the life cycle.
 */
final class FaroApplication {
  private static final Logger LOG = LoggerFactory.getLogger(FaroApplication.class);

  /** How long an application whose registration failed waits before it tries again. */
  private static final long REGISTRATION_RETRY_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final SparkConf sparkConf;
  private final ClientSettings settings;

  private final Object lock = new Object();
  // @GuardedBy("lock"): created on first use, closed by close().
  private ClientPool pool;
  private LifecycleManager lifecycle;
  private ShuffleClient client;
  private boolean stageListenerAdded;
  private boolean closed;
  // @GuardedBy("lock"): the app's last failed registration (policy auto), and whether a
  // registration runs in the background.
  private RuntimeException registrationFailure;
  private long registrationFailedAtNanos;
  private boolean registering;

  FaroApplication(SparkConf sparkConf, ClientSettings settings) {
    this.sparkConf = sparkConf;
    this.settings = settings;
  }

  private ClientPool pool() {
    synchronized (lock) {
      checkNotClosed();
      if (pool == null) {
        pool = new ClientPool("faro-client", settings.network());
      }
      return pool;
    }
  }

  /** This JVM's client, started on first use. */
  ShuffleClient client() {
    synchronized (lock) {
      checkNotClosed();
      if (client == null) {
        client = new ShuffleClient(pool(), settings);
      }
      return client;
    }
  }

  /**
   * The driver's lifecycle manager, registering the app at the first call (for at most
   * faro.client.fallback.connect.timeout). Under policy never every call registers until one
   * succeeds. Under auto a failed registration is answered again without waiting, and tried again
   * in the background at most once a minute: the shuffles registered meanwhile fall back at once.
   */
  LifecycleManager lifecycle() {
    synchronized (lock) {
      checkNotClosed();
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
      if (registered != null && (closed || lifecycle != null)) {
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
   * Nothing is started once closed: what it started then would never be closed.
   *
   * @throws IllegalStateException once closed (only a late warm-up should see it)
   */
  // @GuardedBy("lock")
  private void checkNotClosed() {
    if (closed) {
      throw new IllegalStateException("Faro's shuffle manager of this JVM was stopped");
    }
  }

  /**
   * Tells the lifecycle manager of every stage attempt that ends with success (see {@link
   * LifecycleManager#stageAttemptEnded}); added once, on the driver, at the first shuffle.
   */
  void addStageListener(SparkContext context) {
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

  /**
   * This JVM's client, its connections proving the app's identity the handle carries: to every
   * master and worker when the cluster authenticates applications, else to the driver's lifecycle
   * port only (an executor learns it from the first handle it sees; the driver's pool already
   * proves it).
   */
  ShuffleClient authenticatedClient(FaroShuffleHandle<?, ?, ?> handle) {
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

  /** Forgets {@code shuffleId} in what runs (the driver's lifecycle manager, the client). */
  void unregisterShuffle(int shuffleId) {
    synchronized (lock) {
      if (lifecycle != null) {
        lifecycle.unregisterShuffle(shuffleId);
      }
      if (client != null) {
        client.forget(shuffleId);
      }
    }
  }

  /** Closes what was started, once; nothing starts after. */
  void close() {
    synchronized (lock) {
      closed = true;
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
