package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.AppId;
import io.faro.common.id.WorkerId;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.RegisteredWorker;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On the leader, declares workers lost and removes apps whose heartbeats stopped, by submitting
 * WorkerLost and RemoveApp commands. Runs on one named scheduled thread; checks a few times per
 * timeout, so a worker is declared lost between one timeout and 1.25 timeouts after its last
 * heartbeat. On a follower it does nothing; a master that becomes leader gives everyone a full
 * grace period (see {@link LoadView#startTerm}).
 */
public final class LivenessMonitor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LivenessMonitor.class);
  private static final Duration MIN_PERIOD = Duration.ofMillis(20);
  private static final Duration MAX_PERIOD = Duration.ofSeconds(5);

  private final RaftNode raft;
  private final LoadView loads;
  private final Clock clock;
  private final Duration workerTimeout;
  private final Duration appTimeout;
  private final ScheduledExecutorService executor;
  // Commands in flight, so that a slow commit is not submitted again on every check.
  private final Set<WorkerId> losing = ConcurrentHashMap.newKeySet();
  private final Set<AppId> removing = ConcurrentHashMap.newKeySet();

  public LivenessMonitor(
      RaftNode raft,
      LoadView loads,
      Clock clock,
      Duration workerTimeout,
      Duration appTimeout,
      String threadName) {
    this.raft = requireNonNull(raft, "raft is null");
    this.loads = requireNonNull(loads, "loads is null");
    this.clock = requireNonNull(clock, "clock is null");
    this.workerTimeout = requireNonNull(workerTimeout, "workerTimeout is null");
    this.appTimeout = requireNonNull(appTimeout, "appTimeout is null");
    requireNonNull(threadName, "threadName is null");
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, threadName);
              thread.setDaemon(true);
              return thread;
            });
  }

  public void start() {
    Duration shortest = workerTimeout.compareTo(appTimeout) < 0 ? workerTimeout : appTimeout;
    Duration period = clamp(shortest.dividedBy(4));
    executor.scheduleWithFixedDelay(
        this::checkSafely, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static Duration clamp(Duration period) {
    return period.compareTo(MIN_PERIOD) < 0
        ? MIN_PERIOD
        : period.compareTo(MAX_PERIOD) > 0 ? MAX_PERIOD : period;
  }

  private void checkSafely() {
    try {
      check();
    } catch (RuntimeException e) {
      // A failed check must not cancel the schedule; the next one tries again.
      LOG.warn("Liveness check on master {} failed", raft.masterId(), e);
    }
  }

  private void check() {
    if (!raft.isLeaderReady()) {
      // Followers keep the heartbeats they hear, for when they lead; only of known members, and
      // of unknown ones for one timeout.
      record Known(Set<WorkerId> workers, Set<AppId> apps) {}
      Known known =
          raft.read(
              state ->
                  new Known(
                      Set.copyOf(state.workers().keySet()), Set.copyOf(state.apps().keySet())));
      long maxAge = Math.max(workerTimeout.toMillis(), appTimeout.toMillis());
      loads.pruneUnknown(known.workers(), known.apps(), clock.millis(), maxAge);
      return;
    }
    loads.startTerm(raft.currentTerm(), clock.millis());
    record Members(List<WorkerId> workers, List<AppId> apps) {}
    Members members =
        raft.read(
            state ->
                new Members(
                    state.aliveWorkers().stream().map(RegisteredWorker::id).toList(),
                    state.appIds()));
    loads.retain(Set.copyOf(members.workers()), Set.copyOf(members.apps()));
    long now = clock.millis();
    for (WorkerId worker : members.workers()) {
      long silentMs = now - loads.workerLastHeartbeat(worker, now);
      if (silentMs > workerTimeout.toMillis() && losing.add(worker)) {
        declareLost(worker, silentMs);
      }
    }
    for (AppId app : members.apps()) {
      long silentMs = now - loads.appLastHeartbeat(app, now);
      if (silentMs > appTimeout.toMillis() && removing.add(app)) {
        remove(app, silentMs);
      }
    }
  }

  private void declareLost(WorkerId worker, long silentMs) {
    String reason =
        "no heartbeat for "
            + silentMs
            + "ms (faro.master.worker.timeout="
            + workerTimeout.toMillis()
            + "ms)";
    LOG.warn("Declaring worker {} lost: {}", worker, reason);
    raft.submit(new StampedCommand(clock.millis(), new StateCommand.WorkerLost(worker, reason)))
        .whenComplete(
            (result, error) -> {
              losing.remove(worker);
              if (error != null) {
                LOG.warn("Could not declare worker {} lost: {}", worker, error.toString());
              } else {
                loads.forgetWorker(worker);
              }
            });
  }

  private void remove(AppId app, long silentMs) {
    String reason =
        "no heartbeat for "
            + silentMs
            + "ms (faro.master.app.timeout="
            + appTimeout.toMillis()
            + "ms)";
    LOG.warn("Removing app {} and its shuffles: {}", app, reason);
    raft.submit(new StampedCommand(clock.millis(), new StateCommand.RemoveApp(app, reason)))
        .whenComplete(
            (result, error) -> {
              removing.remove(app);
              if (error != null) {
                LOG.warn("Could not remove app {}: {}", app, error.toString());
              } else {
                loads.forgetApp(app);
              }
            });
  }

  @Override
  public void close() {
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("Liveness monitor of master {} did not stop within 5s", raft.masterId());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
