package io.faro.bench.masters;

import static java.util.Objects.requireNonNull;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskStatusP;
import io.faro.proto.DiskTierP;
import io.faro.proto.EmptyResponse;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerEndpointP;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import io.faro.proto.WorkerStateP;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fleet in one process, against a real group of masters over real RPCs: simulated workers that
 * register and heartbeat every master on a worker's schedule, reporting the shuffles placed on
 * them, and applications that register, heartbeat, place shuffles (slot requests), unregister them
 * when their time is up and unregister themselves after a number of shuffles. Nothing listens at
 * the simulated workers' addresses: masters never call workers, and no data moves.
 *
 * <p>Threads: one timer for the workers' and apps' heartbeats; one churn thread that keeps the
 * number of live shuffles at its target; the answers complete on the pools' event loops.
 */
final class FleetLoad implements AutoCloseable {
  /**
   * @param partitions partitions of each shuffle placed
   * @param workerHeartbeat a simulated worker's heartbeat interval (faro.worker.heartbeat.interval)
   * @param appHeartbeat an app's heartbeat interval (faro.client.app.heartbeat.interval)
   * @param shuffleLife a shuffle's mean lifetime; each lives between half and one and a half of it
   * @param shufflesPerApp shuffles an app places before it unregisters
   * @param connections the connections the simulated workers share to each master
   * @param placementsInFlight most slot requests waiting for an answer at once
   */
  record Settings(
      int partitions,
      Duration workerHeartbeat,
      Duration appHeartbeat,
      Duration shuffleLife,
      int shufflesPerApp,
      int connections,
      int placementsInFlight) {}

  /** One simulated worker: the shuffles placed on it, which its heartbeats report until expired. */
  private static final class SimWorker {
    final String id;
    final WorkerEndpointP endpoint;
    final Map<ShuffleKeyP, Boolean> held = new ConcurrentHashMap<>();
    final AtomicBoolean registering = new AtomicBoolean();
    final MasterClient client;
    ScheduledFuture<?> beat;

    SimWorker(String id, WorkerEndpointP endpoint, MasterClient client) {
      this.id = id;
      this.endpoint = endpoint;
      this.client = client;
    }
  }

  /** One application: its own authenticated connections, heartbeat and shuffles. */
  private static final class SimApp {
    final AppId id;
    final ClientPool pool;
    final MasterClient client;
    final ScheduledFuture<?> beat;
    int placed;
    int live;

    SimApp(AppId id, ClientPool pool, MasterClient client, ScheduledFuture<?> beat) {
      this.id = id;
      this.pool = pool;
      this.client = client;
      this.beat = beat;
    }
  }

  private record LiveShuffle(SimApp app, ShuffleKeyP key, long endsAtNanos) {}

  private static final long BYTES_PER_HELD_SHUFFLE = 64L << 20;

  final Latencies leaderHeartbeats = new Latencies();
  final Latencies followerHeartbeats = new Latencies();
  final Latencies slotRequests = new Latencies();
  final Latencies shuffleUnregisters = new Latencies();
  final Latencies appRegistrations = new Latencies();
  final Latencies workerRegistrations = new Latencies();

  private final Settings settings;
  private final List<ClientPool> memberPools = new ArrayList<>();
  private final List<MasterClient> memberClients = new ArrayList<>();
  private final ClientPool anonymous;
  private final MasterClient registrar;
  private final ScheduledExecutorService timer =
      Executors.newScheduledThreadPool(2, daemon("fleet-timer"));
  private final ScheduledExecutorService churnThread =
      Executors.newSingleThreadScheduledExecutor(daemon("fleet-churn"));
  private final List<SimWorker> workers = new CopyOnWriteArrayList<>();
  private final Map<String, SimWorker> workersById = new ConcurrentHashMap<>();
  private final AtomicInteger registeredWorkers = new AtomicInteger();
  // Churn thread only, but read by the bench's thread too.
  private final PriorityQueue<LiveShuffle> live =
      new PriorityQueue<>((a, b) -> Long.compare(a.endsAtNanos(), b.endsAtNanos()));
  private final Semaphore placing;
  private final AtomicInteger liveCount = new AtomicInteger();
  private final AtomicInteger appCounter = new AtomicInteger();
  private final List<SimApp> apps = new CopyOnWriteArrayList<>();
  private volatile int targetShuffles;
  private volatile int leaderIndex = -1;
  private SimApp openApp;

  FleetLoad(Settings settings, List<HostPort> masters, Secret clusterSecret) {
    this.settings = requireNonNull(settings, "settings is null");
    requireNonNull(clusterSecret, "clusterSecret is null");
    this.placing = new Semaphore(settings.placementsInFlight());
    NetworkSettings network = oneThread();
    AuthOptions.Credentials member =
        new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(clusterSecret));
    for (int i = 0; i < settings.connections(); i++) {
      ClientPool pool =
          new ClientPool("fleet-workers-" + i, network, member, m -> Handshake.MASTER);
      memberPools.add(pool);
      memberClients.add(new MasterClient(pool, masters, Duration.ofSeconds(60)));
    }
    anonymous = new ClientPool("fleet-apps", network);
    registrar = new MasterClient(anonymous, masters, Duration.ofSeconds(60));
    churnThread.scheduleWithFixedDelay(this::churn, 50, 50, TimeUnit.MILLISECONDS);
  }

  static NetworkSettings oneThread() {
    return NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "1"));
  }

  /** The master (its index in the endpoints) whose heartbeat answers count as the leader's. */
  void leader(int index) {
    leaderIndex = index;
  }

  /** Adds simulated workers until there are {@code count}, and waits until all registered. */
  void growWorkers(int count) throws InterruptedException {
    int first = workers.size();
    Semaphore inFlight = new Semaphore(32);
    for (int i = first; i < count; i++) {
      // Each its own loopback address, as an emulated host would have; nothing listens there.
      String host = "127.1." + (i / 250) + "." + (i % 250 + 1);
      WorkerEndpointP endpoint =
          WorkerEndpointP.newBuilder()
              .setHost(host)
              .setRpcPort(9097)
              .setPushPort(9098)
              .setFetchPort(9099)
              .build();
      SimWorker w =
          new SimWorker(host + ":9097", endpoint, memberClients.get(i % memberClients.size()));
      workers.add(w);
      workersById.put(w.id, w);
      inFlight.acquire();
      register(w).whenComplete((r, e) -> inFlight.release());
    }
    inFlight.acquire(32);
    inFlight.release(32);
    long periodMs = settings.workerHeartbeat().toMillis();
    for (int i = first; i < count; i++) {
      SimWorker w = workers.get(i);
      w.beat =
          timer.scheduleAtFixedRate(
              () -> beat(w),
              ThreadLocalRandom.current().nextLong(periodMs),
              periodMs,
              TimeUnit.MILLISECONDS);
    }
  }

  int registeredWorkers() {
    return registeredWorkers.get();
  }

  private CompletableFuture<RegisterWorkerResponse> register(SimWorker w) {
    if (!w.registering.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(null);
    }
    RegisterWorkerRequest request =
        RegisterWorkerRequest.newBuilder()
            .setWorkerId(w.id)
            .setEndpoint(w.endpoint)
            .addDisks(
                DiskSpecP.newBuilder()
                    .setIndex(0)
                    .setPath("/data/faro")
                    .setTier(DiskTierP.SSD)
                    .setCapacityBytes(4L << 40))
            .build();
    long start = System.nanoTime();
    return w.client
        .call(request, RegisterWorkerResponse.class)
        .whenComplete(
            (r, e) -> {
              w.registering.set(false);
              if (e == null) {
                workerRegistrations.record(System.nanoTime() - start);
                registeredWorkers.incrementAndGet();
              } else {
                workerRegistrations.failed();
              }
            });
  }

  private void beat(SimWorker w) {
    List<ShuffleKeyP> held = new ArrayList<>(w.held.keySet());
    WorkerHeartbeatRequest.Builder request =
        WorkerHeartbeatRequest.newBuilder()
            .setWorkerId(w.id)
            .setState(WorkerStateP.SERVING)
            .addDisks(
                DiskLoadP.newBuilder()
                    .setIndex(0)
                    .setTier(DiskTierP.SSD)
                    .setStatus(DiskStatusP.HEALTHY)
                    .setUsableBytes(2L << 40)
                    .setActivePartitions(held.size())
                    .setFlushMsPerMib(1.0)
                    .setReadMsPerMib(1.0))
            .addAllShuffles(held);
    held.forEach(s -> request.addShuffleBytes(BYTES_PER_HELD_SHUFFLE));
    WorkerHeartbeatRequest built = request.build();
    long start = System.nanoTime();
    List<CompletableFuture<WorkerHeartbeatResponse>> answers =
        w.client.callEach(built, WorkerHeartbeatResponse.class);
    for (int i = 0; i < answers.size(); i++) {
      Latencies into = i == leaderIndex ? leaderHeartbeats : followerHeartbeats;
      answers
          .get(i)
          .whenComplete(
              (r, e) -> {
                if (e != null) {
                  into.failed();
                  return;
                }
                into.record(System.nanoTime() - start);
                if (r.getLeader()) {
                  // The real worker deletes what expired and stops reporting it.
                  r.getExpiredShufflesList().forEach(w.held::remove);
                  if (r.getRegisterAgain()) {
                    register(w);
                  }
                }
              });
    }
  }

  /** From now on, keeps {@code count} shuffles live: placing new ones, or letting them end. */
  void liveShuffles(int count) {
    targetShuffles = count;
  }

  /** Shuffles placed and not yet unregistered. */
  int liveCount() {
    return liveCount.get();
  }

  /** Apps registered and not yet unregistered. */
  int apps() {
    return apps.size();
  }

  private void churn() {
    try {
      long now = System.nanoTime();
      List<LiveShuffle> ended = new ArrayList<>();
      synchronized (live) {
        while (!live.isEmpty() && live.peek().endsAtNanos() <= now) {
          ended.add(live.poll());
        }
      }
      ended.forEach(this::end);
      while (liveCount.get() < targetShuffles && placing.tryAcquire()) {
        place();
      }
    } catch (RuntimeException e) {
      // A thrown exception would end the churn's schedule.
      System.err.println("fleet: churn step failed: " + e);
    }
  }

  private void place() {
    SimApp app = openApp;
    if (app == null || app.placed >= settings.shufflesPerApp()) {
      app = registerApp();
      if (app == null) {
        placing.release();
        return;
      }
      openApp = app;
    }
    SimApp owner = app;
    ShuffleKeyP key =
        ShuffleKeyP.newBuilder().setAppId(owner.id.value()).setShuffleId(owner.placed).build();
    owner.placed++;
    owner.live++;
    liveCount.incrementAndGet();
    long start = System.nanoTime();
    owner
        .client
        .call(
            RequestSlotsRequest.newBuilder()
                .setShuffle(key)
                .setNumPartitions(settings.partitions())
                .build(),
            RequestSlotsResponse.class)
        .whenComplete(
            (r, e) -> {
              placing.release();
              if (e != null) {
                slotRequests.failed();
                churnThread.execute(() -> ended(owner));
                return;
              }
              slotRequests.record(System.nanoTime() - start);
              for (PartitionLocationP l : r.getLocationsList()) {
                SimWorker w = workersById.get(l.getWorkerId());
                if (w != null) {
                  w.held.put(key, Boolean.TRUE);
                }
              }
              long life = settings.shuffleLife().toNanos();
              long endsAt =
                  System.nanoTime() + life / 2 + ThreadLocalRandom.current().nextLong(life);
              synchronized (live) {
                live.add(new LiveShuffle(owner, key, endsAt));
              }
            });
  }

  private void end(LiveShuffle s) {
    long start = System.nanoTime();
    s.app()
        .client
        .call(
            UnregisterShuffleRequest.newBuilder().setShuffle(s.key()).build(), EmptyResponse.class)
        .whenComplete(
            (r, e) -> {
              if (e == null) {
                shuffleUnregisters.record(System.nanoTime() - start);
              } else {
                shuffleUnregisters.failed();
              }
              churnThread.execute(() -> ended(s.app()));
            });
  }

  /** One of {@code app}'s shuffles is gone (on the churn thread). */
  private void ended(SimApp app) {
    liveCount.decrementAndGet();
    app.live--;
    if (app.live == 0 && app.placed >= settings.shufflesPerApp()) {
      apps.remove(app);
      app.beat.cancel(false);
      app.client
          .call(
              UnregisterAppRequest.newBuilder().setAppId(app.id.value()).build(),
              EmptyResponse.class)
          .whenComplete((r, e) -> app.pool.close());
    }
  }

  /** Registers a new app (on the churn thread, waiting): null when the masters refused it. */
  private SimApp registerApp() {
    AppId id = new AppId("fleet-" + appCounter.getAndIncrement());
    long start = System.nanoTime();
    BenchApp registered;
    try {
      registered = BenchApp.register(registrar, id);
    } catch (RuntimeException e) {
      appRegistrations.failed();
      System.err.println("fleet: app " + id + " not registered: " + e.getMessage());
      return null;
    }
    appRegistrations.record(System.nanoTime() - start);
    long periodMs = settings.appHeartbeat().toMillis();
    AppHeartbeatRequest beat = AppHeartbeatRequest.newBuilder().setAppId(id.value()).build();
    ScheduledFuture<?> beats =
        timer.scheduleAtFixedRate(
            () -> registered.client().callEach(beat, EmptyResponse.class),
            periodMs,
            periodMs,
            TimeUnit.MILLISECONDS);
    SimApp app = new SimApp(id, registered.pool(), registered.client(), beats);
    apps.add(app);
    return app;
  }

  /** Resets every recorder: a phase's measurement starts. */
  void resetLatencies() {
    for (Latencies l :
        List.of(
            leaderHeartbeats,
            followerHeartbeats,
            slotRequests,
            shuffleUnregisters,
            appRegistrations,
            workerRegistrations)) {
      l.reset();
    }
  }

  @Override
  public void close() {
    churnThread.shutdownNow();
    timer.shutdownNow();
    // Slot requests still waiting retry on their app's connections: let them end first.
    try {
      placing.tryAcquire(settings.placementsInFlight(), 10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    apps.forEach(a -> a.pool.close());
    memberPools.forEach(ClientPool::close);
    anonymous.close();
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
