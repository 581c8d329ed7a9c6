package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.protocol.DriverProto;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.Futures;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits still waiting for a worker's answer, and the question the lifecycle manager asks the
 * masters about them: is that worker lost? A hung worker (stopped, swapping, its disk stuck)
 * answers nothing, and its commit would take the whole of faro.client.commit.timeout (600 s by
 * default); once the masters have declared it lost (faro.master.worker.timeout, 120 s by default)
 * its commit fails at once, so its copies count as lost (read from their replicas, or the map stage
 * runs again) instead of stalling every reader of the shuffle.
 *
 * <p>{@link #check} runs on the heartbeat thread; it asks the masters only while some commit has
 * waited longer than {@code minWait}, once per call, whatever the number of commits.
 */
final class CommitWatch {
  private static final Logger LOG = LoggerFactory.getLogger(CommitWatch.class);

  private record Waiting(ShuffleId shuffle, WorkerId worker, long sinceMillis) {}

  private final MasterClient master;
  private final long minWaitMillis;
  private final Clock clock;
  private final Map<CompletableFuture<?>, Waiting> waiting = new ConcurrentHashMap<>();
  private final AtomicBoolean asking = new AtomicBoolean();

  CommitWatch(MasterClient master, Duration minWait, Clock clock) {
    this.master = requireNonNull(master, "master is null");
    this.minWaitMillis = minWait.toMillis();
    this.clock = requireNonNull(clock, "clock is null");
  }

  /** Watches {@code commit} of {@code shuffle} on {@code worker} until it completes. */
  void watch(ShuffleId shuffle, WorkerId worker, CompletableFuture<?> commit) {
    waiting.put(commit, new Waiting(shuffle, worker, clock.millis()));
    commit.whenComplete((r, e) -> waiting.remove(commit));
  }

  /** Commits being watched. */
  int size() {
    return waiting.size();
  }

  /**
   * Asks the masters which workers are lost if some commit has waited long enough, and fails each
   * waiting commit on such a worker.
   */
  void check() {
    try {
      ask();
    } catch (RuntimeException e) {
      // Runs on the heartbeat's schedule, which a thrown exception would end.
      asking.set(false);
      LOG.warn("Cannot ask the masters about workers with waiting commits", e);
    }
  }

  private void ask() {
    long now = clock.millis();
    boolean due = waiting.values().stream().anyMatch(w -> now - w.sinceMillis() >= minWaitMillis);
    if (!due || !asking.compareAndSet(false, true)) {
      return;
    }
    DriverProto.lostWorkers(master)
        .whenComplete(
            (lost, error) -> {
              asking.set(false);
              if (error != null) {
                LOG.debug(
                    "Cannot ask the masters about workers with waiting commits: {}",
                    Futures.unwrap(error).toString());
                return;
              }
              // Only a worker the masters list as lost: one they do not list (masters that lost
              // their state and have not heard it register again yet) may well be alive.
              waiting.forEach(
                  (commit, w) -> {
                    if (lost.contains(w.worker())) {
                      String reason =
                          "worker "
                              + w.worker()
                              + " is lost: the masters have not heard from it within "
                              + "faro.master.worker.timeout, and its commit of shuffle "
                              + w.shuffle()
                              + " has not answered";
                      if (commit.completeExceptionally(
                          new FaroException(ErrorCode.COMMIT_FAILED, reason))) {
                        LOG.warn(
                            "Commit of shuffle {} on worker {} gives up: {}",
                            w.shuffle(),
                            w.worker(),
                            reason);
                      }
                    }
                  });
            });
  }
}
