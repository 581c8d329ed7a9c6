package io.faro.bench.masters;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskStatusP;
import io.faro.proto.DiskTierP;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerEndpointP;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import io.faro.proto.WorkerStateP;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The simulated workers of a {@link FleetLoad}: each registers, then heartbeats every master on a
 * worker's schedule, naming the shuffles placed on it and dropping those the leader answers as
 * expired (as a real worker deletes them). They prove the cluster's secret, on connections they
 * share. Heartbeats run on the load's timer; answers complete on the pools' event loops.
 */
final class SimulatedWorkers implements AutoCloseable {
  /** One simulated worker: the shuffles placed on it, which its heartbeats report until expired. */
  private static final class SimWorker {
    final String id;
    final WorkerEndpointP endpoint;
    final Map<ShuffleKeyP, Boolean> held = new ConcurrentHashMap<>();
    final AtomicBoolean registering = new AtomicBoolean();
    final MasterClient client;

    SimWorker(String id, WorkerEndpointP endpoint, MasterClient client) {
      this.id = id;
      this.endpoint = endpoint;
      this.client = client;
    }
  }

  private static final long BYTES_PER_HELD_SHUFFLE = 64L << 20;

  final Latencies leaderHeartbeats = new Latencies();
  final Latencies followerHeartbeats = new Latencies();

  /** Registrations, including those a leader asked for again during a phase. */
  final Latencies registrations = new Latencies();

  private final Duration heartbeat;
  private final ScheduledExecutorService timer;
  private final List<ClientPool> pools = new ArrayList<>();
  private final List<MasterClient> clients = new ArrayList<>();
  private final List<SimWorker> workers = new CopyOnWriteArrayList<>();
  private final Map<String, SimWorker> workersById = new ConcurrentHashMap<>();
  private final AtomicInteger registeredWorkers = new AtomicInteger();
  private volatile int leaderIndex = -1;

  /**
   * @param connections the connections to each master the workers share
   * @param heartbeat a worker's heartbeat interval (faro.worker.heartbeat.interval)
   * @param timer where the heartbeats run
   */
  SimulatedWorkers(
      List<HostPort> masters,
      Secret clusterSecret,
      int connections,
      Duration heartbeat,
      ScheduledExecutorService timer) {
    this.heartbeat = heartbeat;
    this.timer = timer;
    AuthOptions.Credentials member =
        new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(clusterSecret));
    for (int i = 0; i < connections; i++) {
      ClientPool pool =
          new ClientPool(
              "fleet-workers-" + i, FleetLoad.oneThread(), member, m -> Handshake.MASTER);
      pools.add(pool);
      clients.add(new MasterClient(pool, masters, Duration.ofSeconds(60)));
    }
  }

  /** A slot of shuffle {@code key} was placed on {@code workerId}: its heartbeats report it. */
  void placed(String workerId, ShuffleKeyP key) {
    SimWorker w = workersById.get(workerId);
    if (w != null) {
      w.held.put(key, Boolean.TRUE);
    }
  }

  void resetLatencies() {
    leaderHeartbeats.reset();
    followerHeartbeats.reset();
    registrations.reset();
  }

  @Override
  public void close() {
    pools.forEach(ClientPool::close);
  }

  /** The master (its index in the endpoints) whose heartbeat answers count as the leader's. */
  void leader(int index) {
    leaderIndex = index;
  }

  /** Adds simulated workers until there are {@code count}, and waits until all registered. */
  void grow(int count) throws InterruptedException {
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
      SimWorker w = new SimWorker(host + ":9097", endpoint, clients.get(i % clients.size()));
      workers.add(w);
      workersById.put(w.id, w);
      inFlight.acquire();
      register(w).whenComplete((r, e) -> inFlight.release());
    }
    inFlight.acquire(32);
    inFlight.release(32);
    long periodMs = heartbeat.toMillis();
    for (int i = first; i < count; i++) {
      SimWorker w = workers.get(i);
      timer.scheduleAtFixedRate(
          () -> beat(w),
          ThreadLocalRandom.current().nextLong(periodMs),
          periodMs,
          TimeUnit.MILLISECONDS);
    }
  }

  int registered() {
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
                registrations.record(System.nanoTime() - start);
                registeredWorkers.incrementAndGet();
              } else {
                registrations.failed();
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
}
