package io.faro.worker.heartbeat;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.Futures;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.WorkerHeartbeatResponse;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's side of membership: registers with the masters, then heartbeats every master at a
 * fixed delay on one named thread, registers again when a master asks, and hands expired shuffles
 * to {@code expire} (which must not block: deletion runs on the disk threads).
 */
public final class MasterLink implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterLink.class);

  private final MasterClient masters;
  private final WorkerReports reports;
  private final Consumer<ShuffleId> expire;
  private final Duration interval;
  private final ScheduledExecutorService heartbeatThread;
  private volatile boolean closed;

  public MasterLink(
      MasterClient masters,
      WorkerReports reports,
      Consumer<ShuffleId> expire,
      Duration interval,
      String threadName) {
    this.masters = requireNonNull(masters, "masters is null");
    this.reports = requireNonNull(reports, "reports is null");
    this.expire = requireNonNull(expire, "expire is null");
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
    masters.callBlocking(reports.registration(), RegisterWorkerResponse.class);
    LOG.info("Worker {} registered with masters {}", reports.workerId(), masters.endpoints());
  }

  /** Starts heartbeating every faro.worker.heartbeat.interval. */
  public void startHeartbeats() {
    heartbeatThread.scheduleWithFixedDelay(
        this::heartbeatSafely, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void heartbeatSafely() {
    try {
      heartbeat();
    } catch (RuntimeException e) {
      if (!closed) {
        LOG.warn(
            "Heartbeat of worker {} to masters {} failed: {}",
            reports.workerId(),
            masters.endpoints(),
            e.getMessage());
      }
    }
  }

  /**
   * Sends the heartbeat to every master (each keeps the loads for when it leads) and follows only
   * the leader's answer. When no master answers as leader (an election), nothing is done.
   */
  private void heartbeat() {
    List<CompletableFuture<WorkerHeartbeatResponse>> answers =
        masters.callEach(reports.heartbeat(), WorkerHeartbeatResponse.class);
    // One deadline for all: a master that hangs (e.g. a stopped process) must not delay the
    // next heartbeat to the others.
    long deadline = System.nanoTime() + Math.max(interval.toNanos(), TimeUnit.SECONDS.toNanos(1));
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
        return;
      }
    }
    if (response == null) {
      if (lastError != null && !closed) {
        LOG.warn(
            "Heartbeat of worker {}: no master answered as leader; last error: {}",
            reports.workerId(),
            String.valueOf(Futures.unwrap(lastError)));
      }
      return;
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
      expire.accept(shuffle);
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
