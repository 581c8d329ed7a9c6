package io.faro.bench.masters;

import static java.util.Objects.requireNonNull;

import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.EmptyResponse;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.RequestSlotsRequest;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.UnregisterShuffleRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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

  final Latencies slotRequests = new Latencies();
  final Latencies shuffleUnregisters = new Latencies();
  final Latencies appRegistrations = new Latencies();

  private final Settings settings;
  private final ClientPool anonymous;
  private final MasterClient registrar;
  private final ScheduledExecutorService timer =
      Executors.newScheduledThreadPool(2, daemon("fleet-timer"));
  private final ScheduledExecutorService churnThread =
      Executors.newSingleThreadScheduledExecutor(daemon("fleet-churn"));
  private final SimulatedWorkers workers;
  // Churn thread only, but read by the bench's thread too.
  private final PriorityQueue<LiveShuffle> live =
      new PriorityQueue<>((a, b) -> Long.compare(a.endsAtNanos(), b.endsAtNanos()));
  private final Semaphore placing;
  private final AtomicInteger liveCount = new AtomicInteger();
  private final AtomicInteger appCounter = new AtomicInteger();
  private final List<SimApp> apps = new CopyOnWriteArrayList<>();
  private volatile int targetShuffles;
  private SimApp openApp;

  FleetLoad(Settings settings, List<HostPort> masters, Secret clusterSecret) {
    this.settings = requireNonNull(settings, "settings is null");
    this.placing = new Semaphore(settings.placementsInFlight());
    this.workers =
        new SimulatedWorkers(
            masters, clusterSecret, settings.connections(), settings.workerHeartbeat(), timer);
    anonymous = new ClientPool("fleet-apps", oneThread());
    registrar = new MasterClient(anonymous, masters, Duration.ofSeconds(60));
    churnThread.scheduleWithFixedDelay(this::churn, 50, 50, TimeUnit.MILLISECONDS);
  }

  static NetworkSettings oneThread() {
    return NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "1"));
  }

  /** The simulated workers, their heartbeats and registrations. */
  SimulatedWorkers workers() {
    return workers;
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
                workers.placed(l.getWorkerId(), key);
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
    for (Latencies l : List.of(slotRequests, shuffleUnregisters, appRegistrations)) {
      l.reset();
    }
    workers.resetLatencies();
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
    workers.close();
    anonymous.close();
  }

  static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
