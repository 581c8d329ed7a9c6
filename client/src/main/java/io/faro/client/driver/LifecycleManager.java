package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.client.ClientOptions;
import io.faro.client.ClientSettings;
import io.faro.common.admission.AppProfile;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.id.AppId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.common.network.TransportServer;
import io.faro.proto.MessageType;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntConsumer;
import java.util.function.IntUnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of Faro for one application, and what executors ask it. Its parts, in the order a
 * shuffle meets them:
 *
 * <ul>
 *   <li>{@link AppSession}: registers the app with the masters, keeps it alive, unregisters it;
 *   <li>{@link LifecycleAuth}: the identity executors prove to this lifecycle manager's port;
 *   <li>{@link Registrations}: the engine's register (a first placement) and unregister of a
 *       shuffle;
 *   <li>{@link ExecutorRequests}: each executor request, validated before the parts below act on
 *       it, and answered;
 *   <li>{@link Generations}: which generation of a shuffle a map task writes and readers read;
 *   <li>{@link Placement}: slots from the masters, reserved on the workers, when the first map task
 *       asks; revives of partitions whose push failed;
 *   <li>{@link Generation#mapperEnd}: the winning attempt of each map; the last map's end starts
 *       the commit;
 *   <li>{@link Committer}: the commit on the workers, and the file groups readers are answered
 *       (with {@link CommitWatch} giving up on workers the masters declared lost);
 *   <li>{@link LossCheck}: lost data, and stage attempts that ended without some map, turned into a
 *       re-run of the map stage.
 * </ul>
 *
 * <p>This class puts the parts together, serves the port and is the engine's entry.
 *
 * <p>Threads: one RPC server for executors (bounded event loops) and one heartbeat thread, whatever
 * the number of shuffles or workers; all work is asynchronous on the shared {@link ClientPool}. The
 * pool is borrowed, not owned.
 *
 * <p>Keeps protobuf types: {@link RequestHandler#refusal} is given the message type and meta.
 */
public final class LifecycleManager implements RequestHandler, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);

  private final AppId app;
  private final Generations generations;
  private final LossCheck lossCheck;
  private final AppSession session;
  private final LifecycleAuth auth;
  private final ExecutorRequests requests;
  private final Registrations registrations;
  private final TransportServer server;
  private final HostPort endpoint;
  private final ShufflePhaseStats phases = new ShufflePhaseStats();

  /**
   * Registers {@code app} with the masters and starts serving executors.
   *
   * @throws io.faro.common.error.FaroException CONNECTION_FAILED when no master can be reached: a
   *     job must never silently run without the shuffle service it was configured for
   */
  public LifecycleManager(
      AppId app, ClientSettings settings, ClientPool pool, String advertisedHost) {
    this(app, AppProfile.UNKNOWN, settings, pool, advertisedHost, Clock.systemUTC());
  }

  /**
   * As above, for an application of {@code profile} (its user, queue and name), which the masters'
   * admission rules judge.
   *
   * @throws io.faro.common.error.FaroException ADMISSION_REFUSED, naming the rule, when the
   *     masters' admission rules refuse it
   */
  public LifecycleManager(
      AppId app,
      AppProfile profile,
      ClientSettings settings,
      ClientPool pool,
      String advertisedHost) {
    this(app, profile, settings, pool, advertisedHost, Clock.systemUTC());
  }

  LifecycleManager(
      AppId app, ClientSettings settings, ClientPool pool, String advertisedHost, Clock clock) {
    this(app, AppProfile.UNKNOWN, settings, pool, advertisedHost, clock);
  }

  LifecycleManager(
      AppId app,
      AppProfile profile,
      ClientSettings settings,
      ClientPool pool,
      String advertisedHost,
      Clock clock) {
    this.app = requireNonNull(app, "app is null");
    requireNonNull(settings, "settings is null");
    requireNonNull(pool, "pool is null");
    MasterClient master =
        new MasterClient(
            pool,
            settings.masters(),
            settings.masterRetryTimeout(),
            settings.masterAttemptTimeout());
    this.generations = new Generations(app, settings.pages());
    Placement placement = new Placement(settings, pool, master, clock);
    CommitWatch commitWatch = new CommitWatch(master, settings.appHeartbeatInterval(), clock);
    Committer committer = new Committer(settings, pool, commitWatch);
    this.lossCheck = new LossCheck(generations, committer);
    // A generation dropped for a re-run of every map never commits: its readers get it lost.
    generations.onDropped(committer::abandon);
    this.session = new AppSession(app, profile, settings, master, commitWatch::check);
    this.auth = new LifecycleAuth(app, session.credentials());
    auth.beforeServing(pool);
    this.requests = new ExecutorRequests(app, generations, placement, committer, lossCheck, phases);
    this.registrations = new Registrations(settings, master, generations, placement, committer);
    NetworkSettings network = auth.portNetwork(settings.network());
    try {
      this.server = serve(settings, network, advertisedHost);
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
    this.endpoint = new HostPort(advertisedHost, server.port());
    auth.serving(pool, endpoint);
    LOG.info(
        "Faro lifecycle manager for {} at {} (listening on {}), masters {}",
        app,
        endpoint,
        settings.lifecycleBindHost().isEmpty() ? advertisedHost : settings.lifecycleBindHost(),
        settings.masters());
  }

  /** Starts the port executors call, which serves only the app's identity ({@link #refusal}). */
  private TransportServer serve(
      ClientSettings settings, NetworkSettings network, String advertisedHost) {
    return new TransportServer(
        "faro-lifecycle",
        settings.lifecycleBindHost().isEmpty() ? advertisedHost : settings.lifecycleBindHost(),
        settings.lifecyclePort(),
        ClientOptions.LIFECYCLE_PORT.key() + " (spark.faro.client.lifecycle.port in Spark)",
        network,
        this,
        null);
  }

  public AppId app() {
    return app;
  }

  /**
   * What this app's executors must prove to this lifecycle manager and, when {@link
   * #clusterAuthenticates}, to the whole cluster. The secret goes to executors with the shuffle
   * handle.
   */
  public AuthOptions.Credentials credentials() {
    return auth.credentials();
  }

  /**
   * Whether the masters authenticate applications: then {@link #credentials} are the registration's
   * and prove the app to every master and worker; else they prove it to this lifecycle manager only
   * ({@link ClientPool#authenticateAs(HostPort, AuthOptions.Credentials)}).
   */
  public boolean clusterAuthenticates() {
    return auth.clusterAuthenticates();
  }

  /** Only this app's own executors may call: every request needs the app's identity. */
  @Override
  public Optional<String> refusal(MessageType type, Message meta, Identity who) {
    return auth.refusal(type, who);
  }

  /** Where executors reach this lifecycle manager. */
  public HostPort endpoint() {
    return endpoint;
  }

  /** An executor's request, once {@link #refusal} let it through (see {@link ExecutorRequests}). */
  @Override
  public void handle(Request request, Responder responder) {
    requests.handle(request, responder);
  }

  /** How long each phase of this app's shuffles took, so far. */
  public ShufflePhaseStats phases() {
    return phases;
  }

  // ------------------------------------------------------------------ driver API

  /**
   * Hears the engine shuffle id of every generation reported lost (the engine re-runs its maps).
   */
  public void onShuffleLost(IntConsumer listener) {
    lossCheck.onShuffleLost(listener);
  }

  /**
   * Tells how many map outputs of an engine shuffle the engine still holds (-1: it cannot tell): a
   * new stage attempt that starts while the engine holds none, although some map of the shuffle's
   * latest generation ended, writes a new generation (the engine dropped those outputs and runs
   * every map again).
   */
  public void engineOutputs(IntUnaryOperator available) {
    generations.engineOutputs(available);
  }

  /**
   * The engine finished a map stage attempt with success (see {@link LossCheck#stageAttemptEnded}).
   */
  public void stageAttemptEnded(int stageId, int stageAttempt) {
    lossCheck.stageAttemptEnded(stageId, stageAttempt);
  }

  /**
   * Spark registered engine shuffle {@code shuffleId}, of {@code numMaps} maps and {@code
   * numPartitions} partitions: with faro.client.placement.at.register, its first generation is
   * placed now, in the background, so that its map tasks find their push locations ready. Never
   * blocks: the answer completes once that placement ended (at once when nothing is placed now),
   * for a caller that decides whether Faro can carry the shuffle. A placement that fails here is
   * tried again at the first map task's request, which then fails or succeeds on its own.
   */
  public CompletableFuture<Void> registerShuffle(int shuffleId, int numMaps, int numPartitions) {
    return registerShuffle(shuffleId, numMaps, numPartitions, false);
  }

  /**
   * As {@link #registerShuffle(int, int, int)}; with {@code probeWide}, a shuffle too wide to be
   * placed whole now has its first page placed, so that the answer tells whether the cluster takes
   * it (the masters' limits, workers with room).
   */
  public CompletableFuture<Void> registerShuffle(
      int shuffleId, int numMaps, int numPartitions, boolean probeWide) {
    return registrations.register(shuffleId, numMaps, numPartitions, probeWide);
  }

  /** Whether the app's last heartbeat reached some master. */
  public boolean mastersReachable() {
    return session.mastersReachable();
  }

  /** Forgets the shuffle; the master frees its slots and the workers delete its files. */
  public void unregisterShuffle(int shuffleId) {
    registrations.unregister(shuffleId);
  }

  @Override
  public void close() {
    if (phases.count("commit") > 0) {
      LOG.info(
          "Faro shuffles of {}, time per phase over {} commits: {}",
          app,
          phases.count("commit"),
          phases.describe());
    }
    session.close();
    server.close();
    generations.clear();
  }
}
