package io.faro.master.server;

import static java.util.Objects.requireNonNull;

import io.faro.common.auth.Handshake;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.BindFailures;
import io.faro.common.network.FrameDecoder;
import io.faro.common.network.FreePorts;
import io.faro.common.network.TransportServer;
import io.faro.master.MasterServerOptions;
import io.faro.master.MasterServerSettings;
import io.faro.master.placement.LoadAwarePlacement;
import io.faro.master.placement.PartitionSizeEstimate;
import io.faro.master.placement.PlacementPolicy;
import io.faro.master.placement.RoundRobinPlacement;
import io.faro.master.placement.SlotPlacement;
import io.faro.master.raft.RaftNode;
import io.faro.master.service.AdmissionService;
import io.faro.master.service.FeatureLevels;
import io.faro.master.service.LivenessMonitor;
import io.faro.master.service.LoadView;
import io.faro.master.service.MasterApi;
import io.faro.master.service.MasterRequestHandler;
import io.faro.master.state.MasterStateView;
import io.faro.master.state.StateReader;
import io.faro.metrics.FaroMetrics;
import io.faro.metrics.HttpEndpoint;
import io.faro.metrics.RequestMetrics;
import java.io.IOException;
import java.net.BindException;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root of one master process: builds every part by constructor, starts them in
 * order and closes them in reverse. Holds no static state, so several masters (a whole Raft group)
 * can run in one JVM.
 *
 * <p>Threads, all named after the master id: the RPC server's event loops ({@code
 * faro-master-<id>-rpc-*}), one liveness thread ({@code faro-master-<id>-liveness}), and the Ratis
 * server's own threads.
 */
public final class MasterServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterServer.class);

  private final MasterServerSettings config;
  private final Clock clock;
  private final LoadView loads = new LoadView();
  // Written by start and close, which are synchronized; read by the accessors.
  private volatile RaftNode raft;
  private volatile TransportServer rpcServer;
  private volatile HttpEndpoint httpServer;
  private final FaroMetrics metrics = FaroMetrics.forProcess();
  private volatile LivenessMonitor liveness;
  private volatile AdmissionService admission;
  private volatile FeatureLevels levels;

  private boolean started;

  /** Parses and validates the master's config; throws ConfigException naming a bad key. */
  public MasterServer(FaroConf conf) {
    this(MasterServerSettings.from(conf), Clock.systemUTC());
  }

  MasterServer(MasterServerSettings config, Clock clock) {
    this.config = requireNonNull(config, "config is null");
    this.clock = requireNonNull(clock, "clock is null");
  }

  /** The placement faro.master.slots.policy names, reading this master's heartbeats. */
  private SlotPlacement slotPlacement() {
    return switch (config.slotsPolicy()) {
      case ROUND_ROBIN -> new RoundRobinPlacement(config.maxWorkersPerShuffle());
      case LOAD_AWARE -> {
        PartitionSizeEstimate estimate =
            new PartitionSizeEstimate(config.partitionSizeInitial(), config.partitionSizeMin());
        yield new LoadAwarePlacement(
            config.loadAware(), () -> estimate.update(loads.recentPartitionSizes()));
      }
    };
  }

  /** The settings this master was made with. */
  public MasterServerSettings config() {
    return config;
  }

  /**
   * Binds the RPC server, starts Raft (recovering the state from the storage directory), waits at
   * most {@code faro.master.leader.wait.timeout} for a leader, and starts the liveness checks.
   * Until this master leads, RPCs are answered NOT_LEADER.
   */
  public synchronized void start() {
    if (started) {
      throw new IllegalStateException("master " + config.masterId() + " already started");
    }
    started = true;
    try {
      MasterServerSettings resolved =
          config.withRaftPort(config.raftPort() != 0 ? config.raftPort() : freeRaftPort());
      raft = new RaftNode(resolved);
      MasterRequestHandler handler = requestHandler();
      MasterMetrics.register(metrics, raft);
      String name = "faro-master-" + config.masterId();
      rpcServer = rpcServer(name, handler);
      startRaft(resolved.raftPort());
      if (config.httpPort() >= 0) {
        startHttp(name + "-http", handler);
      }
      awaitLeader();
      liveness =
          new LivenessMonitor(
              raft, loads, clock, config.workerTimeout(), config.appTimeout(), name + "-liveness");
      liveness.start();
      if (!config.admissionFile().isEmpty()) {
        admission.startReloading(name + "-admission-file");
      }
      logStarted();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * The handler of this master's RPCs, over Raft, the workers' loads, placement and admission (kept
   * in {@link #admission}).
   */
  private MasterRequestHandler requestHandler() {
    PlacementPolicy placement =
        new PlacementPolicy(
            slotPlacement(), loads::diskLoads, w -> loads.reported(w).state(), loads::placed);
    admission = new AdmissionService(raft, loads, clock, config.admissionFile(), metrics);
    levels =
        new FeatureLevels(
            raft,
            clock,
            config.network(),
            new FeatureLevels.Settings(config.initialFeatureLevel(), config.featureLevelAuto()),
            "faro-master-" + masterId());
    return new MasterRequestHandler(
        raft,
        loads,
        placement,
        clock,
        new MasterRequestHandler.Limits(
            config.maxPartitionsPerShuffle(),
            config.maxApps(),
            config.maxAppsPerHost(),
            config.maxAppsPerUser()),
        config.network().auth(),
        admission,
        levels,
        metrics);
  }

  /**
   * Completes with the reason once this master stopped applying its log (an entry or snapshot of a
   * newer release): its process must stop.
   */
  public CompletableFuture<String> halted() {
    RaftNode node = raft;
    if (node == null) {
      throw new IllegalStateException("master " + config.masterId() + " is not started");
    }
    return node.halted();
  }

  /**
   * Binds the RPC port, as the server that clients name "master" in their handshake (a member's
   * proof meant for another server is refused).
   */
  private TransportServer rpcServer(String name, MasterRequestHandler handler) {
    return new TransportServer(
        name + "-rpc",
        config.bindHost(),
        config.rpcPort(),
        MasterServerOptions.PORT.key(),
        config.network().withAuth(config.network().auth().withSelf(Handshake.MASTER)),
        handler,
        null,
        FrameDecoder.Bodies.CONTIGUOUS,
        null,
        new RequestMetrics(metrics, "faro_master", "rpc", MasterRequestHandler.SERVED));
  }

  /** Logs the ports this master serves on, and what in its security settings deserves a warning. */
  private void logStarted() {
    LOG.info(
        "Master {} serving RPCs on port {}, Raft on port {}, HTTP status on port {}, leader: {}",
        config.masterId(),
        rpcPort(),
        raftPort(),
        httpPort(),
        raft.leaderId());
    config.network().tls().logSummary("Master " + config.masterId());
    config.network().auth().offWarning("master").ifPresent(LOG::warn);
    if (config.network().auth().enabled()
        && !config.network().tls().enabled()
        && config.peers().size() > 1) {
      LOG.warn(
          "Master {}: faro.auth.enabled is on but faro.tls.enabled is off, so the Raft port {} "
              + "checks no peer (Ratis has no shared-secret check): keep it on a network only "
              + "the masters reach, or turn TLS on (the Raft port then takes mutual TLS)",
          config.masterId(),
          raftPort());
    }
  }

  /**
   * For faro.master.raft.port 0: Ratis binds the port itself, but the group's peers must name it
   * first.
   */
  private int freeRaftPort() {
    try {
      return FreePorts.pick(config.bindHost(), 1)[0];
    } catch (IOException e) {
      throw new IllegalStateException(
          "master "
              + config.masterId()
              + " cannot find a free Raft port on "
              + config.bindHost()
              + " ("
              + MasterServerOptions.HOST.key()
              + "): "
              + e,
          e);
    }
  }

  /** Starts Raft; a port in use names its key, any other failure the storage directory. */
  private void startRaft(int raftPort) {
    String what = "master " + config.masterId() + "'s Raft server";
    String raftPortKey =
        MasterServerOptions.RAFT_PORT.key()
            + " (or this master's entry in "
            + MasterServerOptions.RAFT_PEERS.key()
            + ")";
    // Ratis's gRPC server ends the JVM (System.exit) when it cannot bind: check the port first.
    BindFailures.requireFree(what, config.bindHost(), raftPort, raftPortKey);
    try {
      raft.start(rpcServer.port());
    } catch (IOException | RuntimeException e) {
      Optional<BindException> bind = BindFailures.find(e);
      if (bind.isPresent()) {
        throw new IllegalStateException(
            BindFailures.message(what, config.bindHost(), raftPort, raftPortKey, bind.get()), e);
      }
      if (e instanceof RuntimeException runtime) {
        throw runtime;
      }
      throw new FaroException(
          ErrorCode.INTERNAL,
          "master "
              + config.masterId()
              + " cannot start Raft in "
              + config.ratisDir()
              + " ("
              + MasterServerOptions.RATIS_DIR.key()
              + "): "
              + e,
          e);
    }
  }

  private void startHttp(String name, MasterRequestHandler handler) {
    httpServer =
        HttpEndpoint.start(
            config.bindHost(),
            config.httpPort(),
            MasterServerOptions.HTTP_PORT.key(),
            name,
            metrics,
            MasterPages.of(handler::masterStatus, new MasterApi(raft, handler).pages()),
            HttpEndpoint.Admin.of(MasterApi.OPERATORS, config.network().auth()));
  }

  private void awaitLeader() {
    if (raft.awaitLeader(config.leaderWaitTimeout())) {
      return;
    }
    String message =
        "no Raft leader within "
            + config.leaderWaitTimeout().toMillis()
            + "ms (faro.master.leader.wait.timeout) among "
            + config.peers();
    if (config.peers().size() == 1) {
      throw new FaroException(ErrorCode.TIMEOUT, "master " + config.masterId() + ": " + message);
    }
    // In a group, the other masters may simply not be up yet; serve NOT_LEADER meanwhile.
    LOG.warn("Master {}: {}; going on", config.masterId(), message);
  }

  /** The bound RPC port (the actual one when configured as 0). */
  public int rpcPort() {
    TransportServer server = rpcServer;
    if (server == null) {
      throw new IllegalStateException("master " + config.masterId() + " is not started");
    }
    return server.port();
  }

  /** This master's metrics, as its HTTP port exports them. */
  public FaroMetrics metrics() {
    return metrics;
  }

  /** The bound port of the HTTP status page, or -1 when it is off. */
  public int httpPort() {
    HttpEndpoint http = httpServer;
    return http == null ? -1 : http.port();
  }

  /** The bound Raft port (the actual one when configured as 0). */
  public int raftPort() {
    RaftNode node = raft;
    if (node == null) {
      throw new IllegalStateException("master " + config.masterId() + " is not started");
    }
    return node.raftPort();
  }

  public String masterId() {
    return config.masterId();
  }

  /** This master's copy of the state (tests compare the copies of a group). */
  MasterStateView stateView() {
    RaftNode node = raft;
    if (node == null) {
      throw new IllegalStateException("master " + config.masterId() + " is not started");
    }
    return node.read(StateReader::view);
  }

  /** This master's own view of its Raft group. */
  public RaftNode.NodeStatus raftStatus() {
    RaftNode node = raft;
    return node == null
        ? new RaftNode.NodeStatus("stopped", -1, -1, -1, "", false, -1, -1)
        : node.status();
  }

  /** True when this master is the Raft leader and ready to serve. */
  public boolean isLeader() {
    RaftNode node = raft;
    return node != null && node.isLeaderReady();
  }

  /**
   * Stops the liveness checks, Raft and the RPC server, in reverse order of start. Best effort: a
   * part that fails to stop is logged and the others are still stopped.
   */
  @Override
  public synchronized void close() {
    try {
      if (admission != null) {
        admission.close();
      }
      if (levels != null) {
        levels.close();
      }
      if (liveness != null) {
        liveness.close();
      }
      if (raft != null) {
        raft.close();
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Master {}: stopping Raft failed", config.masterId(), e);
    } finally {
      if (httpServer != null) {
        httpServer.close();
      }
      if (rpcServer != null) {
        rpcServer.close();
      }
      httpServer = null;
      liveness = null;
      raft = null;
      rpcServer = null;
    }
  }
}
