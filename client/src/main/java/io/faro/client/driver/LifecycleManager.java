package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.client.ClientOptions;
import io.faro.common.admission.AppProfile;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.common.network.TransportServer;
import io.faro.proto.EmptyResponse;
import io.faro.proto.GetPushLocationsRequest;
import io.faro.proto.GetPushLocationsResponse;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MapperEndRequest;
import io.faro.proto.MapperEndResponse;
import io.faro.proto.MessageType;
import io.faro.proto.ReportShuffleLostRequest;
import io.faro.proto.ReviveRequest;
import io.faro.proto.ReviveResponse;
import io.faro.proto.UnregisterShuffleRequest;
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
 * <p>Threads: one RPC server for executors (bounded event loops) and one heartbeat thread, whatever
 * the number of shuffles or workers; all work is asynchronous on the shared {@link ClientPool}. The
 * pool is borrowed, not owned.
 *
 * <p>Over 400 lines because it is the driver's RPC front: each executor request is validated here
 * (shapes, ranges, generations) before the classes that act on a generation see it; the acting
 * lives in {@link Placement}, {@link Committer} and {@link LossCheck}.
 */
public final class LifecycleManager implements RequestHandler, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);

  /**
   * Most pages of a shuffle placed when Spark registers it (65,536 partitions with the default
   * faro.client.partitions.per.page): a wider shuffle's map tasks place the pages they push to, so
   * that one of a million mostly empty partitions holds slots only where data goes.
   */
  static final int PAGES_PLACED_AT_REGISTER = 4;

  private final AppId app;
  private final AuthOptions.Credentials credentials;
  private final boolean clusterAuthenticates;
  private final ClientOptions.Settings settings;
  private final MasterClient master;
  private final Generations generations;
  private final Placement placement;
  private final Committer committer;
  private final LossCheck lossCheck;
  private final AppSession session;
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
      AppId app, ClientOptions.Settings settings, ClientPool pool, String advertisedHost) {
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
      ClientOptions.Settings settings,
      ClientPool pool,
      String advertisedHost) {
    this(app, profile, settings, pool, advertisedHost, Clock.systemUTC());
  }

  LifecycleManager(
      AppId app,
      ClientOptions.Settings settings,
      ClientPool pool,
      String advertisedHost,
      Clock clock) {
    this(app, AppProfile.UNKNOWN, settings, pool, advertisedHost, clock);
  }

  LifecycleManager(
      AppId app,
      AppProfile profile,
      ClientOptions.Settings settings,
      ClientPool pool,
      String advertisedHost,
      Clock clock) {
    this.app = requireNonNull(app, "app is null");
    this.settings = requireNonNull(settings, "settings is null");
    requireNonNull(pool, "pool is null");
    this.master =
        new MasterClient(
            pool,
            settings.masters(),
            settings.masterRetryTimeout(),
            settings.masterAttemptTimeout());
    this.generations = new Generations(app, settings.pages());
    this.placement = new Placement(settings, pool, master, clock);
    CommitWatch commitWatch = new CommitWatch(master, settings.appHeartbeatInterval(), clock);
    this.committer = new Committer(settings, pool, commitWatch);
    this.lossCheck = new LossCheck(generations, committer);
    // A generation dropped for a re-run of every map never commits: its readers get it lost.
    generations.onDropped(committer::abandon);
    this.session = new AppSession(app, profile, settings, master, commitWatch::check);
    // With a cluster that authenticates applications, everything after the registration proves
    // the app's identity, and the executors must prove it here too. Without, the executors still
    // prove an identity of the app's own to this port, so that nobody else can end its maps or
    // read its file groups: a secret this driver makes and hands its executors with the handles.
    Optional<AuthOptions.Credentials> cluster = session.credentials();
    this.clusterAuthenticates = cluster.isPresent();
    this.credentials = cluster.orElseGet(() -> ownCredentials(app));
    if (clusterAuthenticates) {
      pool.authenticateAs(credentials);
    }
    NetworkOptions.Settings network =
        settings
            .network()
            .withAuth(
                AuthOptions.Settings.forApp(
                    credentials.identity(), credentials.secret().orElseThrow()));
    try {
      this.server =
          new TransportServer(
              "faro-lifecycle",
              settings.lifecycleBindHost().isEmpty()
                  ? advertisedHost
                  : settings.lifecycleBindHost(),
              settings.lifecyclePort(),
              ClientOptions.LIFECYCLE_PORT.key() + " (spark.faro.client.lifecycle.port in Spark)",
              network,
              this,
              null);
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
    this.endpoint = new HostPort(advertisedHost, server.port());
    if (!clusterAuthenticates) {
      pool.authenticateAs(endpoint, credentials);
    }
    LOG.info(
        "Faro lifecycle manager for {} at {} (listening on {}), masters {}",
        app,
        endpoint,
        settings.lifecycleBindHost().isEmpty() ? advertisedHost : settings.lifecycleBindHost(),
        settings.masters());
  }

  /**
   * An identity of this app that only this driver and its executors know, for a cluster that does
   * not authenticate applications: its nonce is a hash of a token nobody sees, its secret random.
   */
  private static AuthOptions.Credentials ownCredentials(AppId app) {
    byte[] secret = AppSecrets.token();
    return AuthOptions.Credentials.app(
        Identity.app(app, AppSecrets.nonce(AppSecrets.token())), Secret.ofBytes(secret));
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
    return credentials;
  }

  /**
   * Whether the masters authenticate applications: then {@link #credentials} are the registration's
   * and prove the app to every master and worker; else they prove it to this lifecycle manager only
   * ({@link ClientPool#authenticateAs(HostPort, AuthOptions.Credentials)}).
   */
  public boolean clusterAuthenticates() {
    return clusterAuthenticates;
  }

  /** Only this app's own executors may call: every request needs the app's identity. */
  @Override
  public Optional<String> refusal(MessageType type, Message meta, Identity who) {
    return Identity.require(credentials.identity(), who, type);
  }

  /** Where executors reach this lifecycle manager. */
  public HostPort endpoint() {
    return endpoint;
  }

  // ------------------------------------------------------------------ RPCs from executors

  @Override
  public void handle(Request request, Responder responder) {
    switch (request.type()) {
      case GET_PUSH_LOCATIONS_REQUEST ->
          pushLocations(request.meta(GetPushLocationsRequest.class), responder);
      case MAPPER_END_REQUEST -> mapperEnd(request.meta(MapperEndRequest.class), responder);
      case GET_REDUCER_FILE_GROUPS_REQUEST ->
          reducerFileGroups(request.meta(GetReducerFileGroupsRequest.class), responder);
      case REVIVE_REQUEST -> revive(request.meta(ReviveRequest.class), responder);
      case REPORT_SHUFFLE_LOST_REQUEST ->
          reportLost(request.meta(ReportShuffleLostRequest.class), responder);
      default ->
          responder.fail(
              ErrorCode.UNSUPPORTED_MESSAGE,
              "the lifecycle manager does not serve " + request.type());
    }
  }

  private void pushLocations(GetPushLocationsRequest r, Responder responder) {
    Generation g =
        generations.forWriter(
            r.getShuffleId(),
            r.getStageId(),
            r.getStageAttempt(),
            r.getNumMaps(),
            r.getNumPartitions());
    int start = r.getStartPartition();
    int askedEnd = r.hasEndPartition() ? r.getEndPartition() : Integer.MAX_VALUE;
    int end = Math.min(askedEnd, g.numPartitions());
    if (start < 0 || askedEnd < start || (start < askedEnd && start >= g.numPartitions())) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "locations of partitions "
              + start
              + " until "
              + askedEnd
              + " of shuffle "
              + g.id()
              + " asked: not a range of its "
              + g.numPartitions()
              + " partitions");
      return;
    }
    g.timeline().mark(ShuffleTimeline.Mark.FIRST_ASK);
    placement
        .place(g, start, end)
        .whenComplete(
            (placed, error) -> {
              if (error != null) {
                responder.fail(Futures.unwrap(error));
                return;
              }
              GetPushLocationsResponse.Builder b =
                  GetPushLocationsResponse.newBuilder().setFaroShuffleId(g.id().shuffle());
              g.locations().current(start, end).forEach(l -> b.addLocations(IdMapper.toProto(l)));
              responder.respond(b.build());
            });
  }

  private void revive(ReviveRequest r, Responder responder) {
    Generation g = generations.get(r.getShuffleId());
    placement
        .revive(g, r.getPartitionsList())
        .whenComplete(
            (locations, error) -> {
              if (error != null) {
                responder.fail(Futures.unwrap(error));
                return;
              }
              ReviveResponse.Builder b = ReviveResponse.newBuilder();
              locations.forEach(l -> b.addLocations(IdMapper.toProto(l)));
              responder.respond(b.build());
            });
  }

  private void mapperEnd(MapperEndRequest r, Responder responder) {
    Generation g = generations.get(r.getShuffleId());
    g.checkShape(r.getNumMaps(), -1);
    BatchCounts batches = BatchCounts.of(r.getBatchPartitionsList(), r.getBatchCountsList());
    Generation.MapEnd end = g.mapperEnd(r.getMapId(), r.getAttemptId(), batches, r.getIncomplete());
    if (end.startsCommit()) {
      g.timeline().mark(ShuffleTimeline.Mark.COMMIT_STARTED);
      committer.commit(g).thenRun(() -> committed(g));
    }
    responder.respond(
        MapperEndResponse.newBuilder()
            .setWinningAttemptId(end.winner())
            .setGenerationLost(g.lost())
            .build());
  }

  /**
   * A reducer found data of a generation lost on every copy (see {@link LossCheck#reportedLost}).
   */
  private void reportLost(ReportShuffleLostRequest r, Responder responder) {
    Generation g = generations.get(r.getFaroShuffleId());
    RuntimeException error = lossCheck.reportedLost(g, r.getPartitionId(), r.getReason());
    if (error != null) {
      responder.fail(error);
      return;
    }
    responder.respond(EmptyResponse.getDefaultInstance());
  }

  private void reducerFileGroups(GetReducerFileGroupsRequest r, Responder responder) {
    int start = r.getStartPartition();
    int askedEnd = r.hasEndPartition() ? r.getEndPartition() : Integer.MAX_VALUE;
    if (start < 0 || askedEnd < start) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "files of partitions "
              + start
              + " until "
              + askedEnd
              + " of shuffle "
              + r.getShuffleId()
              + " asked: not a range");
      return;
    }
    if (r.getNumMaps() == 0) {
      // No map task, no file: every partition asked is empty.
      responder.respond(
          GetReducerFileGroupsResponse.newBuilder()
              .setStartPartition(start)
              .setEndPartition(askedEnd)
              .build());
      return;
    }
    Generation g;
    if (r.hasFaroShuffleId()) {
      g = generations.get(r.getFaroShuffleId());
      if (g.engineShuffleId() != r.getShuffleId()) {
        responder.fail(
            ErrorCode.INVALID_REQUEST,
            "Faro shuffle "
                + g.id()
                + " is a generation of shuffle "
                + g.engineShuffleId()
                + ", not of shuffle "
                + r.getShuffleId());
        return;
      }
    } else {
      g = generations.latest(r.getShuffleId());
    }
    // A generation no stage ever wrote (made at registration) has no commit to wait for.
    if (g == null || !g.written()) {
      responder.fail(
          ErrorCode.UNKNOWN_SHUFFLE,
          "shuffle "
              + r.getShuffleId()
              + " of "
              + app
              + " was never written through this lifecycle manager (or was unregistered)");
      return;
    }
    if (start < askedEnd && start >= g.numPartitions()) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "files of partition "
              + start
              + " asked; shuffle "
              + g.id()
              + " has "
              + g.numPartitions());
      return;
    }
    int end = Math.max(start, Math.min(askedEnd, g.numPartitions()));
    int startMap = r.hasStartMap() ? r.getStartMap() : 0;
    int endMap = r.hasEndMap() ? r.getEndMap() : g.numMaps();
    if (startMap < 0 || endMap < startMap || endMap > g.numMaps()) {
      responder.fail(
          ErrorCode.INVALID_REQUEST,
          "batches of maps "
              + startMap
              + " until "
              + endMap
              + " asked; shuffle "
              + g.id()
              + " has "
              + g.numMaps());
      return;
    }
    committer
        .fileGroups(g)
        .whenComplete(
            (files, error) -> {
              if (error != null) {
                responder.fail(error);
              } else {
                firstRead(g);
                responder.respond(
                    r.getBatchCountsOnly()
                        ? files.batchCounts(start, end, startMap, endMap)
                        : files.answer(start, end));
              }
            });
  }

  /** Counts the time from {@code g}'s commit to its first reader's answer, once. */
  private void firstRead(Generation g) {
    if (!g.commitStarted()) {
      return; // abandoned: answered without a commit
    }
    // COMMITTED first, in case this answer runs before committed(g) does.
    g.timeline().mark(ShuffleTimeline.Mark.COMMITTED);
    if (g.timeline().mark(ShuffleTimeline.Mark.FIRST_READ)) {
      phases.add(g.timeline(), ShuffleTimeline.Phase.FIRST_READ);
    }
  }

  /** Counts and logs (at debug) the phases of {@code g}'s life up to its commit. */
  private void committed(Generation g) {
    ShuffleTimeline t = g.timeline();
    t.mark(ShuffleTimeline.Mark.COMMITTED);
    phases.add(
        t,
        ShuffleTimeline.Phase.SCHEDULING,
        ShuffleTimeline.Phase.SLOTS,
        ShuffleTimeline.Phase.RESERVE,
        ShuffleTimeline.Phase.PLACEMENT,
        ShuffleTimeline.Phase.PLACEMENT_WAIT,
        ShuffleTimeline.Phase.MAPS,
        ShuffleTimeline.Phase.COMMIT);
    if (LOG.isDebugEnabled()) {
      LOG.debug("Shuffle {} committed; its phases: {}", g.id(), t.describe());
    }
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
    if (numMaps <= 0 || numPartitions <= 0) {
      // No map task will ever ask (an empty RDD), or a shape the first request refuses.
      return CompletableFuture.completedFuture(null);
    }
    Generation g;
    try {
      g = generations.forRegistration(shuffleId, numMaps, numPartitions);
    } catch (RuntimeException e) {
      LOG.debug("Shuffle {} is not placed at registration: {}", shuffleId, e.toString());
      return CompletableFuture.failedFuture(e);
    }
    if (g == null || !g.timeline().mark(ShuffleTimeline.Mark.REGISTERED)) {
      return CompletableFuture.completedFuture(null);
    }
    // A shuffle of a few pages is placed whole; a wider one page by page, as its maps push to each.
    if (!settings.placeAtRegister()) {
      return CompletableFuture.completedFuture(null);
    }
    boolean wide = g.pages().count(numPartitions) > PAGES_PLACED_AT_REGISTER;
    if (wide && !probeWide) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> placed =
        placement.place(g, 0, wide ? g.pages().end(0, numPartitions) : numPartitions);
    placed.whenComplete(
        (v, error) -> {
          if (error != null) {
            LOG.info(
                "Shuffle {} could not be placed at registration; its first map task asks"
                    + " again: {}",
                g.id(),
                Futures.unwrap(error).toString());
          }
        });
    return placed;
  }

  /** Whether the app's last heartbeat reached some master. */
  public boolean mastersReachable() {
    return session.mastersReachable();
  }

  /** Forgets the shuffle; the master frees its slots and the workers delete its files. */
  public void unregisterShuffle(int shuffleId) {
    for (Generation g : generations.remove(shuffleId)) {
      committer.forget(g);
      // After any placement under way (one started at registration may still be): a slot request
      // the master applied after the unregister would make it hold the shuffle again.
      g.placementsEnded()
          .thenCompose(
              v ->
                  master.call(
                      UnregisterShuffleRequest.newBuilder()
                          .setShuffle(IdMapper.toProto(g.id()))
                          .build(),
                      EmptyResponse.class))
          .whenComplete(
              (r, e) -> {
                if (e != null) {
                  LOG.warn(
                      "Unregistering shuffle {} failed; the master frees it with the app: {}",
                      g.id(),
                      Futures.unwrap(e).toString());
                }
              });
    }
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
