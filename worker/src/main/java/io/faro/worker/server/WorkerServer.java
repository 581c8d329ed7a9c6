package io.faro.worker.server;

import static java.util.Objects.requireNonNull;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.NetworkSettings;
import io.faro.common.version.ClusterLevel;
import io.faro.metrics.FaroMetrics;
import io.faro.metrics.HttpEndpoint;
import io.faro.proto.WorkerStateP;
import io.faro.worker.SplitMode;
import io.faro.worker.WorkerOptions;
import io.faro.worker.WorkerSettings;
import io.faro.worker.control.ControlHandler;
import io.faro.worker.extension.WorkerExtensions;
import io.faro.worker.heartbeat.MasterLink;
import io.faro.worker.heartbeat.WorkerReports;
import io.faro.worker.lifecycle.WorkerLifecycle;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.meta.CommittedFiles;
import io.faro.worker.meta.StartupRecovery;
import io.faro.worker.meta.WorkerMetaStore;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.ReservationLimits;
import io.faro.worker.partition.SealReport;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.protocol.ProtoMapper;
import io.faro.worker.replicate.ReplicaLinks;
import io.faro.worker.status.WorkerStatusSampler;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskChecker;
import io.faro.worker.storage.DiskHealth;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.IoMode;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker process's composition root: builds every part by constructor, starts them in
 * dependency order and closes them in reverse. Holds no static state, so several workers can run in
 * one JVM (tests do).
 *
 * <p>Threads, all named and bounded: three servers ({@link WorkerPorts}: rpc, push, fetch;
 * faro.network.io.threads event loops each); faro.worker.tier.TIER.flush.threads flushers per disk;
 * one heartbeat thread; one memory relief thread; the event loops of the connection to the masters.
 *
 * <p>Over 400 lines, knowingly: it builds every part in dependency order (disks and the start-time
 * recovery, the memory budget, the store, three servers, the master link and the lifecycle), wires
 * them by constructor, and closes them in reverse; what each part does lives in the part.
 */
public final class WorkerServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerServer.class);

  private final WorkerSettings settings;
  private final WorkerExtensions extensions;

  // Set by start() and read after it; start() and close() are synchronized.
  private Disks disks;
  private DiskChecker diskChecker;
  private ScheduledThreadPoolExecutor memoryThread;
  private MemoryBudget budget;
  private WorkerStatusSampler status;
  private PartitionStore store;
  private WorkerMetaStore meta;
  private CommittedFiles.Recovery recovery;
  private WorkerPorts ports;
  private HttpEndpoint httpServer;
  private final FaroMetrics metrics = FaroMetrics.forProcess();
  // The cluster's feature level, as the leader last told: what the servers take (protocols).
  private final ClusterLevel clusterLevel = new ClusterLevel();
  private ClientPool masterConnections;
  private ClientPool replicaConnections;
  private MasterLink masterLink;
  private volatile WorkerLifecycle lifecycle;
  private volatile Runnable exitRequest = () -> {};
  private volatile WorkerId workerId;
  private volatile WorkerEndpoint endpoint;
  private boolean started;
  private boolean closed;

  /**
   * A worker of {@code conf}, with the {@link io.faro.worker.extension.WorkerExtension}s on the
   * class path (none in Faro's distribution) configured with it.
   *
   * @throws io.faro.common.config.ConfigException naming the key at fault
   */
  public WorkerServer(FaroConf conf) {
    this(WorkerSettings.from(requireNonNull(conf, "conf is null")), WorkerExtensions.load(conf));
  }

  /** A worker of {@code settings}, without extensions. */
  public WorkerServer(WorkerSettings settings) {
    this(settings, WorkerExtensions.none());
  }

  public WorkerServer(WorkerSettings settings, WorkerExtensions extensions) {
    this.settings = requireNonNull(settings, "settings is null");
    this.extensions = requireNonNull(extensions, "extensions is null");
  }

  /**
   * Opens the disks, binds the three servers and registers with the masters; returns once
   * registered, then heartbeats in the background.
   *
   * @throws io.faro.common.error.FaroException when every disk is broken (a directory that cannot
   *     be created or written) or no master accepted the registration within
   *     faro.master.client.retry.timeout (everything started is closed again)
   */
  public synchronized void start() {
    if (started) {
      throw new IllegalStateException("worker already started");
    }
    started = true;
    // Before anything starts: a worker whose faults are injected must say so, even if it fails.
    extensions.warning().ifPresent(LOG::warn);
    try {
      startStorage();
      startServers();
      startHttp();
      startMasterLink();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
    LOG.info(
        "Worker {} serving on {} (rpc {}, push {}, fetch {}) with disks {}",
        workerId,
        endpoint.host(),
        endpoint.rpcPort(),
        endpoint.pushPort(),
        endpoint.fetchPort(),
        disks.all());
    settings.network().auth().offWarning("worker").ifPresent(LOG::warn);
  }

  private void startStorage() {
    disks = Disks.open(settings.storage().dirs(), settings.diskOptions(), "faro-worker");
    disks.all().forEach(extensions::attach);
    // What an earlier run committed is served again; every other file it left is garbage.
    StartupRecovery.Result recovered =
        StartupRecovery.run(
            settings.storage().metaDir(),
            settings.ports().id().map(WorkerId::value).orElse(""),
            disks);
    meta = recovered.store();
    recovery = recovered.recovery();
    disks.deleteLeftovers(recovery.keep());
    // Checked once before registering, so the masters never hear of a disk as healthy unchecked.
    diskChecker = new DiskChecker(disks, settings.storage().diskCheck(), "faro-worker-disk-check");
    diskChecker.start();
    requireAUsableDisk();
    memoryThread =
        new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("faro-worker-memory", true));
    // The relief reads the store field when it runs: only after pushes, so after it is set.
    budget =
        new MemoryBudget(
            settings.memory().pauseBytes(),
            settings.memory().resumeBytes(),
            () -> store.flushBuffered(),
            memoryThread);
    settings.network().tls().logSummary("Worker");
    // Forwards to replicas use their own connections and event loops: never a push event loop,
    // which keeps the forwarding order (see ReplicaLink).
    replicaConnections =
        new ClientPool(
            "faro-worker-replicate",
            settings.network(),
            AuthOptions.Credentials.as(Identity.CLUSTER, settings.network().auth()),
            replica -> Handshake.worker(replica.host(), replica.port()));
    // Half the request timeout: the primary must hear of a slow replica, and answer
    // REPLICA_FAILED, before its own client gives up on the push and suspects the primary.
    ReplicaLinks links =
        new ReplicaLinks(replicaConnections, settings.network().requestTimeout().dividedBy(2));
    store =
        new PartitionStore(
            disks,
            new WriterSettings(
                settings.storage().flushBufferSize(),
                settings.storage().chunkSize(),
                settings.storage().splitThreshold(),
                settings.storage().splitMode() == SplitMode.HARD,
                settings.storage().commitSync(),
                settings.storage().runBytes()),
            links::link,
            new ReservationLimits(
                settings.storage().reserveMaxLocations(),
                settings.storage().maxPartitions(),
                settings.storage().maxWrittenPartitions()));
    for (CommittedFiles.RecoveredShuffle r : recovery.shuffles()) {
      store.restore(
          r.shuffle(), r.ownerToken(), r.appNonce(), r.partitions(), r.empty(), r.sealed());
    }
    if (meta != null) {
      store.recordCommitsIn(
          new CommittedFiles(meta, disks, Clock.systemUTC(), settings.storage().commitSync()));
    }
    status = new WorkerStatusSampler(budget, disks.all().stream().map(Disk::ioMode).toList());
    status.start(memoryThread);
  }

  /**
   * A worker whose every disk is broken after the first check cannot store anything: it refuses to
   * start, before it listens or registers, naming each disk and why. Some broken disks are a
   * warning: the masters place nothing there until a check passes.
   */
  private void requireAUsableDisk() {
    List<Disk> broken =
        disks.all().stream().filter(d -> d.state() == DiskHealth.State.BROKEN).toList();
    if (broken.isEmpty()) {
      return;
    }
    String each =
        broken.stream()
            .map(d -> d + ": " + d.health().describe())
            .collect(Collectors.joining("; "));
    if (broken.size() == disks.size()) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED,
          "every disk of this worker is broken, so it does not "
              + "start or register with the masters: "
              + each
              + ". Fix the directories, or list usable ones in "
              + WorkerOptions.DIRS.key()
              + " ("
              + WorkerOptions.DIRS.allowed()
              + ")");
    }
    LOG.warn(
        "{} of {} disks are broken; nothing is placed on them until a check passes (every {} ms, {}): {}",
        broken.size(),
        disks.size(),
        settings.storage().diskCheck().interval().toMillis(),
        WorkerOptions.DISK_CHECK_INTERVAL.key(),
        each);
  }

  private void startServers() {
    // Clients name a worker's server by its advertised host and the server's port.
    NetworkSettings network =
        settings
            .network()
            .withAuth(settings.network().auth().withSelf("worker@" + settings.ports().host()));
    // The lifecycle comes with the master link, after the servers: read when asked.
    ControlHandler control =
        new ControlHandler(
            store,
            status,
            this::reportedState,
            (asked, graceful) -> lifecycle.stopAsked(asked, graceful),
            network.auth(),
            () -> workerId == null ? null : workerId.value(),
            clusterLevel);
    ports =
        WorkerPorts.start(
            settings, extensions, network, control, store, budget, metrics, clusterLevel);
    workerId =
        settings
            .ports()
            .id()
            .orElseGet(() -> new WorkerId(settings.ports().host() + ":" + ports.rpc.port()));
    endpoint =
        new WorkerEndpoint(
            settings.ports().host(), ports.rpc.port(), ports.push.port(), ports.fetch.port());
  }

  /**
   * Registers the worker's metrics and starts its HTTP port, unless faro.worker.http.port is -1.
   */
  private void startHttp() {
    WorkerMetrics.register(
        metrics, store, budget, ports.byName(), settings.ports().metricsEnabled());
    if (settings.ports().httpPort() < 0) {
      return;
    }
    httpServer =
        HttpEndpoint.start(
            settings.ports().bindHost(),
            settings.ports().httpPort(),
            WorkerOptions.HTTP_PORT.key(),
            "faro-worker-http",
            metrics,
            new WorkerApi(() -> workerId.value(), store, status).pages(),
            HttpEndpoint.Admin.of(WorkerApi.OPERATORS, settings.network().auth()));
  }

  private void startMasterLink() {
    // The lifecycle tells the masters of a stop through the link built below (read when it runs).
    lifecycle =
        new WorkerLifecycle(
            workerId,
            store,
            settings.leaving().gracefulTimeout(),
            settings.leaving().decommissionTimeout(),
            Clock.systemUTC(),
            () -> masterLink != null && masterLink.heartbeatNow(),
            () -> exitRequest.run());
    NetworkSettings network = settings.network();
    // One event loop is plenty for a registration and a heartbeat every few seconds.
    masterConnections =
        new ClientPool(
            "faro-worker-master",
            network.withIoThreads(1),
            AuthOptions.Credentials.as(Identity.CLUSTER, network.auth()),
            master -> Handshake.MASTER);
    MasterClient masters =
        new MasterClient(
            masterConnections,
            settings.masterLink().masters(),
            settings.masterLink().retryTimeout(),
            settings.masterLink().attemptTimeout());
    masterLink =
        new MasterLink(
            masters,
            new WorkerReports(
                workerId,
                endpoint,
                disks,
                store,
                this::reportedState,
                // The JVM's own start, to the millisecond: the kernel's process start time is
                // only as precise as the boot time it counts from (a second), too coarse to tell
                // a restarted process from the one before it.
                ManagementFactory.getRuntimeMXBean().getStartTime()),
            new MasterLink.Listener() {
              @Override
              public void expired(ShuffleId shuffle) {
                expire(shuffle);
              }

              @Override
              public void decommissioning(boolean decommissioning) {
                lifecycle.decommissioning(decommissioning);
              }

              @Override
              public void afterHeartbeat(boolean leaderAnswered) {
                lifecycle.afterHeartbeat(leaderAnswered);
              }
            },
            settings.masterLink().heartbeatInterval(),
            clusterLevel,
            "faro-worker-heartbeat");
    masterLink.register();
    masterLink.startHeartbeats();
  }

  private void expire(ShuffleId shuffle) {
    store
        .expire(shuffle)
        .whenComplete(
            (done, error) -> {
              if (error != null) {
                LOG.warn("Deleting the files of expired shuffle {} failed", shuffle, error);
              } else {
                LOG.info("Deleted the files of expired shuffle {}", shuffle);
              }
            });
  }

  /**
   * What to run when the worker asks to be stopped: a drain ended, or an operator's stop-worker was
   * answered. The process stops (and so closes) the worker; must not block. Set before {@link
   * #start()}; by default nothing happens.
   */
  public void onExitRequest(Runnable exit) {
    this.exitRequest = requireNonNull(exit, "exit is null");
  }

  /**
   * Stops gracefully, without closing: leaves placement, splits pushes away, seals and records
   * every open location (see {@link WorkerLifecycle#stopGracefully}); returns what it sealed,
   * within faro.worker.graceful.timeout. A restarted worker serves what was sealed once the shuffle
   * commits. Call {@link #close()} next. Idempotent.
   */
  public SealReport stopGracefully() {
    return requireStarted(lifecycle).stopGracefully();
  }

  /** What this worker says it is doing, in heartbeats and status answers. */
  private WorkerStateP reportedState() {
    WorkerLifecycle l = lifecycle;
    return l == null ? WorkerStateP.SERVING : ProtoMapper.toProto(l.state());
  }

  /** What this worker is doing (serving, stopping, draining, drained). */
  public WorkerLifecycle.State state() {
    return requireStarted(lifecycle).state();
  }

  /** This worker's identity; known once {@link #start()} bound the RPC port. */
  public WorkerId workerId() {
    return requireStarted(workerId);
  }

  public WorkerEndpoint endpoint() {
    return requireStarted(endpoint);
  }

  public int rpcPort() {
    return endpoint().rpcPort();
  }

  public int pushPort() {
    return endpoint().pushPort();
  }

  public int fetchPort() {
    return endpoint().fetchPort();
  }

  /** The bound port of the HTTP pages, or -1 when they are off. */
  public int httpPort() {
    HttpEndpoint http = httpServer;
    return http == null ? -1 : http.port();
  }

  /** This worker's metrics, as its HTTP port exports them. */
  public FaroMetrics metrics() {
    return metrics;
  }

  public WorkerSettings settings() {
    return settings;
  }

  MemoryBudget memoryBudget() {
    return requireStarted(budget);
  }

  /** Whether each disk, in faro.worker.dirs order, does direct or buffered I/O. */
  public List<IoMode> diskIoModes() {
    return requireStarted(disks).all().stream().map(Disk::ioMode).toList();
  }

  private static <T> T requireStarted(T value) {
    if (value == null) {
      throw new IllegalStateException("worker not started");
    }
    return value;
  }

  /**
   * Stops heartbeats, closes the servers, releases buffered data and stops the flushers after their
   * queued writes. Committed files stay on disk. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeQuietly(masterLink);
    closeQuietly(masterConnections);
    closeQuietly(ports);
    closeQuietly(httpServer);
    closeQuietly(replicaConnections);
    closeQuietly(diskChecker);
    closeQuietly(store);
    closeQuietly(disks);
    closeQuietly(meta);
    if (memoryThread != null) {
      memoryThread.shutdownNow();
      try {
        memoryThread.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    LOG.info("Worker {} stopped", workerId);
  }

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception e) {
      LOG.warn("Closing {} failed", closeable.getClass().getSimpleName(), e);
    }
  }
}
