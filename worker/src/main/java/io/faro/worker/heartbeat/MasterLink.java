package io.faro.worker.heartbeat;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.Futures;
import io.faro.common.version.ClusterLevel;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerHeartbeatResponse;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's side of membership: registers with the masters, then heartbeats every master at a
 * fixed delay on one named thread, registers again when a master asks, and hands the leader's
 * instructions to a {@link Listener}. Every heartbeat runs on that thread, also one asked for out
 * of turn ({@link #heartbeatNow}).
 */
public final class MasterLink implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterLink.class);

  /** What the leader's heartbeat answers tell the worker; called on the heartbeat thread. */
  public interface Listener {
    /** The masters no longer know {@code shuffle}: delete its files. Must not block. */
    void expired(ShuffleId shuffle);

    /** Whether this worker is decommissioning, as the leader says on each answer. */
    default void decommissioning(boolean decommissioning) {}

    /** After each heartbeat round; {@code leaderAnswered} whether a ready leader answered it. */
    default void afterHeartbeat(boolean leaderAnswered) {}
  }

  private final MasterClient masters;
  private final WorkerReports reports;
  private final Listener listener;
  private final Duration interval;
  private final ClusterLevel level;
  private final ScheduledExecutorService heartbeatThread;
  private volatile boolean closed;

  public MasterLink(
      MasterClient masters,
      WorkerReports reports,
      Listener listener,
      Duration interval,
      ClusterLevel level,
      String threadName) {
    this.level = requireNonNull(level, "level is null");
    this.masters = requireNonNull(masters, "masters is null");
    this.reports = requireNonNull(reports, "reports is null");
    this.listener = requireNonNull(listener, "listener is null");
    this.interval = requireNonNull(interval, "interval is null");
    this.heartbeatThread =
        new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory(threadName, true));
  }

  /**
   * Registers, retrying through every master until faro.master.client.retry.timeout. Blocks.
   *
   * @throws FaroException when no master accepted the registration in time
   */
  public void register() {
    heard(
        masters
            .callBlocking(reports.registration(), RegisterWorkerResponse.class)
            .getFeatureLevel());
    LOG.info("Worker {} registered with masters {}", reports.workerId(), masters.endpoints());
  }

  /**
   * Starts heartbeating every faro.worker.heartbeat.interval; the first goes at once, so that every
   * master knows this worker's state and start time right after its registration.
   */
  public void startHeartbeats() {
    heartbeatThread.scheduleWithFixedDelay(
        this::heartbeatSafely, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Sends a heartbeat now, out of turn (on the heartbeat thread, after the one in progress), and
   * waits for it: the masters learn a new state at once. Returns whether a ready leader answered.
   */
  public boolean heartbeatNow() {
    if (closed) {
      return false;
    }
    try {
      return heartbeatThread
          .submit(this::heartbeatSafely)
          .get(2 * roundTimeoutMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException | TimeoutException | ExecutionException e) {
      return false; // closed meanwhile, or no answer in time: the masters hear it next round
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private long roundTimeoutMillis() {
    return Math.max(interval.toMillis(), 1000);
  }

  private boolean heartbeatSafely() {
    boolean answered = false;
    try {
      answered = heartbeat();
    } catch (RuntimeException e) {
      if (!closed) {
        LOG.warn(
            "Heartbeat of worker {} to masters {} failed: {}",
            reports.workerId(),
            masters.endpoints(),
            e.getMessage());
      }
    }
    try {
      listener.afterHeartbeat(answered);
    } catch (RuntimeException e) {
      LOG.warn("Worker {}: acting on a heartbeat failed", reports.workerId(), e);
    }
    return answered;
  }

  /**
   * Sends the heartbeat to every master (each keeps the loads for when it leads) and follows only
   * the leader's answer. When no master answers as leader (an election), nothing is done. Returns
   * whether a leader answered.
   */
  private boolean heartbeat() {
    List<CompletableFuture<WorkerHeartbeatResponse>> answers =
        masters.callEach(reports.heartbeat(), WorkerHeartbeatResponse.class);
    // One deadline for all: a master that hangs (e.g. a stopped process) must not delay the
    // next heartbeat to the others.
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(roundTimeoutMillis());
    WorkerHeartbeatResponse response = null;
    Throwable lastError = null;
    for (CompletableFuture<WorkerHeartbeatResponse> answer : answers) {
      try {
        long left = Math.max(1, deadline - System.nanoTime());
        WorkerHeartbeatResponse r = answer.get(left, TimeUnit.NANOSECONDS);
        if (r.getLeader()) {
          response = r;
        }
      } catch (ExecutionException e) {
        lastError = e.getCause();
      } catch (TimeoutException e) {
        lastError = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    if (response == null) {
      if (lastError != null && !closed) {
        LOG.warn(
            "Heartbeat of worker {}: no master answered as leader; last error: {}",
            reports.workerId(),
            String.valueOf(Futures.unwrap(lastError)));
      }
      return false;
    }
    if (response.getRegisterAgain()) {
      LOG.info("Masters do not know worker {}: registering again", reports.workerId());
      register();
    }
    for (ShuffleKeyP key : response.getExpiredShufflesList()) {
      ShuffleId shuffle;
      try {
        shuffle = IdMapper.shuffleId(key);
      } catch (FaroException e) {
        LOG.warn("Ignoring an expired shuffle the masters sent: {}", e.getMessage());
        continue;
      }
      listener.expired(shuffle);
    }
    heard(response.getFeatureLevel());
    listener.decommissioning(response.getDecommission());
    return true;
  }

  private void heard(int featureLevel) {
    if (level.heard(featureLevel)) {
      LOG.info(
          "Worker {}: the cluster's feature level is {}; it takes wire protocol {} and newer",
          reports.workerId(),
          level.level(),
          level.oldestProtocol());
    }
  }

  /** Stops heartbeating; a heartbeat in flight is interrupted. */
  @Override
  public void close() {
    closed = true;
    heartbeatThread.shutdownNow();
    try {
      heartbeatThread.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
