package io.faro.worker.lifecycle;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.WorkerId;
import io.faro.worker.WorkerOptions;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.SealReport;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a worker leaves without costing a job anything: the graceful stop (SIGTERM, {@code admin
 * stop-worker}) before a restart, and the drain of a decommission. The one owner of the worker's
 * {@link State}, which every heartbeat reports to the masters.
 *
 * <ul>
 *   <li><b>Graceful stop</b> ({@link #stopGracefully}): refuse reservations, tell the masters at
 *       once (no new slots), seal every open location (pushes are answered SPLIT from then on, so
 *       their clients move to new locations elsewhere; what was acknowledged is written, indexed
 *       and recorded, and synced with faro.worker.commit.sync), wait for commits under way; then
 *       the caller closes the worker. A restarted worker answers the shuffle's commit with the
 *       sealed files.
 *   <li><b>Drain</b> ({@link #decommissioning}, from the leader's heartbeat answer): the same seal,
 *       but the worker keeps serving reads until every shuffle it holds is gone (the masters expire
 *       them) or faro.worker.decommission.timeout passes; it then reports DRAINED (the masters mark
 *       it decommissioned) and asks the process to exit. The operator's include-worker cancels a
 *       drain in progress.
 * </ul>
 *
 * <p>Threads: the heartbeat thread calls {@link #decommissioning} and {@link #afterHeartbeat}; a
 * stop runs on the thread that asks for it (the process's main thread, or a thread of its own for a
 * stop asked over RPC). Transitions are under {@code this}; the waits are not.
 */
public final class WorkerLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerLifecycle.class);

  /** Heartbeat rounds a drained worker tries to tell the masters before it exits anyway. */
  private static final int DRAINED_REPORTS = 3;

  /** What the worker is doing; every heartbeat says it. */
  public enum State {
    /** Takes slots, pushes and fetches. */
    SERVING,
    /** A graceful stop is under way: no new slots, pushes split away, files sealed. */
    STOPPING,
    /** Decommissioning: no new slots, open partitions sealed; serves reads until drained. */
    DRAINING,
    /** Holds nothing anyone reads any more; exits once the masters know. */
    DRAINED
  }

  /** Sends a heartbeat now and says whether a leader answered it; blocks for one round at most. */
  @FunctionalInterface
  public interface Announcer {
    boolean heartbeatNow();
  }

  private final WorkerId worker;
  private final PartitionStore store;
  private final Duration gracefulTimeout;
  private final Duration drainTimeout;
  private final Clock clock;
  private final Announcer announcer;
  private final Runnable exit;

  // Changed under this; read lock-free by every heartbeat and status answer.
  private volatile State state = State.SERVING;

  // @GuardedBy("this") --------------------------------------------------------------------
  private CompletableFuture<SealReport> sealing;
  private long drainStartedMs;
  private int drainedReports;
  private SealReport stopped;
  private boolean exitAsked;
  private boolean leaderSaysDecommission;

  // ----------------------------------------------------------------------------------------

  /**
   * @param gracefulTimeout faro.worker.graceful.timeout: how long a graceful stop may take; zero
   *     turns it off (a stop then seals nothing)
   * @param drainTimeout faro.worker.decommission.timeout
   * @param announcer tells the masters the new state at once (a heartbeat out of turn)
   * @param exit asks the process to exit (it then stops the worker); must not block
   */
  public WorkerLifecycle(
      WorkerId worker,
      PartitionStore store,
      Duration gracefulTimeout,
      Duration drainTimeout,
      Clock clock,
      Announcer announcer,
      Runnable exit) {
    this.worker = requireNonNull(worker, "worker is null");
    this.store = requireNonNull(store, "store is null");
    this.gracefulTimeout = requireNonNull(gracefulTimeout, "gracefulTimeout is null");
    this.drainTimeout = requireNonNull(drainTimeout, "drainTimeout is null");
    this.clock = requireNonNull(clock, "clock is null");
    this.announcer = requireNonNull(announcer, "announcer is null");
    this.exit = requireNonNull(exit, "exit is null");
  }

  /** What the worker is doing now, as its heartbeats say. */
  public State state() {
    return state;
  }

  /**
   * Leaves gracefully (see the class comment) and returns what was sealed; the caller then closes
   * the worker. Returns within faro.worker.graceful.timeout: locations not sealed by then are not
   * served after a restart (their maps run again). Idempotent: a second call returns the first's
   * outcome. With a zero timeout it seals nothing. A drained worker (decommissioned, exiting) has
   * sealed everything already and says DRAINED to the end.
   */
  public SealReport stopGracefully() {
    long deadline = System.nanoTime() + gracefulTimeout.toNanos();
    CompletableFuture<SealReport> seal;
    synchronized (this) {
      if (stopped != null) {
        return stopped;
      }
      if (gracefulTimeout.isZero()) {
        stopped = new SealReport(0, 0, 0);
        return stopped;
      }
      if (state == State.DRAINED && sealing != null) {
        seal = sealing;
      } else {
        seal = null;
        state = State.STOPPING;
        store.refuseReservations("is stopping (graceful stop)");
      }
    }
    if (seal == null) {
      LOG.info(
          "Worker {} stops gracefully: no new slots, pushes split away, open files sealed (at"
              + " most {} s, {})",
          worker,
          gracefulTimeout.toSeconds(),
          WorkerOptions.GRACEFUL_TIMEOUT.key());
      // The masters hear first, so that the splits the seal answers are placed elsewhere.
      boolean told = announcer.heartbeatNow();
      if (!told) {
        LOG.warn(
            "Worker {}: no master leader answered the stop; the masters learn of it at the next"
                + " heartbeat, or when the worker is declared lost",
            worker);
      }
      synchronized (this) {
        // A seal of its own: locations taken after an earlier drain's seal (cancelled by
        // include-worker) must be sealed too; what is sealed already seals again at no cost.
        sealing = store.sealAll();
        seal = sealing;
      }
    }
    SealReport outcome = await(seal, deadline);
    synchronized (this) {
      stopped = outcome;
    }
    return outcome;
  }

  /**
   * An operator's stop (bin/faro admin stop-worker) of worker {@code asked}: on a thread of its
   * own, stops gracefully (or without sealing), completes with what was sealed, then asks the
   * process to exit, which closes the worker (the answer is on its way by then).
   *
   * @throws FaroException INVALID_REQUEST when {@code asked} is another worker (a stale address)
   */
  public CompletableFuture<SealReport> stopAsked(WorkerId asked, boolean graceful) {
    if (!asked.equals(worker)) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "this is worker " + worker + ", not " + asked + ": nothing stopped");
    }
    CompletableFuture<SealReport> done = new CompletableFuture<>();
    Thread stopper =
        new Thread(
            () -> {
              LOG.info(
                  "Worker {}: an operator asked it to stop{}",
                  worker,
                  graceful ? " gracefully" : " at once");
              try {
                done.complete(graceful ? stopGracefully() : stopWithoutSealing());
              } catch (RuntimeException e) {
                done.completeExceptionally(e);
              }
              exit.run();
            },
            "faro-worker-stop");
    stopper.setDaemon(true);
    stopper.start();
    return done;
  }

  /**
   * Makes a later {@link #stopGracefully} seal nothing: an operator asked for a stop at once (what
   * the worker held uncommitted is then lost to the restart). Returns that nothing was sealed.
   */
  private synchronized SealReport stopWithoutSealing() {
    if (stopped == null) {
      stopped = new SealReport(0, 0, 0);
    }
    return stopped;
  }

  private SealReport await(CompletableFuture<SealReport> seal, long deadlineNanos) {
    long start = System.nanoTime();
    try {
      SealReport sealed =
          seal.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
      LOG.info(
          "Worker {} sealed {} partition locations of {} shuffles in {} ms{}",
          worker,
          sealed.sealedLocations(),
          sealed.sealedShuffles(),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
          sealed.failedLocations() == 0
              ? ""
              : "; " + sealed.failedLocations() + " failed and are not served after a restart");
      return sealed;
    } catch (TimeoutException e) {
      int open = store.unfinishedLocations();
      LOG.error(
          "Worker {}: sealing did not end within {} s ({}); about {} locations are not sealed and"
              + " are not served after a restart (their maps run again)",
          worker,
          gracefulTimeout.toSeconds(),
          WorkerOptions.GRACEFUL_TIMEOUT.key(),
          open);
      return new SealReport(0, 0, open);
    } catch (ExecutionException e) {
      LOG.error("Worker {}: sealing failed", worker, e.getCause());
      return new SealReport(0, 0, store.unfinishedLocations());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new SealReport(0, 0, store.unfinishedLocations());
    }
  }

  /**
   * The leader's word on each heartbeat: whether this worker is decommissioning. Starts a drain
   * (reservations refused, open locations sealed) or, when the operator included the worker again,
   * cancels one in progress, also one that just drained (the worker serves again). On the heartbeat
   * thread.
   */
  public synchronized void decommissioning(boolean decommissioning) {
    leaderSaysDecommission = decommissioning;
    if (decommissioning && state == State.SERVING) {
      state = State.DRAINING;
      drainStartedMs = clock.millis();
      store.refuseReservations("is decommissioning");
      // A seal of its own, also after a cancelled drain: what was taken since must split too.
      sealing = store.sealAll();
      LOG.info(
          "Worker {} is decommissioning: no new slots, its open partitions continue elsewhere;"
              + " it serves reads until the {} shuffles it holds are gone (at most {}, {}), then"
              + " exits",
          worker,
          store.shuffles().size(),
          drainTimeout,
          WorkerOptions.DECOMMISSION_TIMEOUT.key());
    } else if (!decommissioning && (state == State.DRAINING || state == State.DRAINED)) {
      state = State.SERVING;
      drainedReports = 0;
      store.takeReservations();
      LOG.info("Worker {}: decommission cancelled (included again); it takes slots again", worker);
    }
  }

  /**
   * After each heartbeat round, on the heartbeat thread: a draining worker whose shuffles are all
   * gone (or whose drain timed out, sealed or not) becomes DRAINED, and once a leader confirmed it
   * still decommissions (or after a few rounds without any leader) asks the process to exit.
   */
  public void afterHeartbeat(boolean leaderAnswered) {
    boolean exitNow = false;
    synchronized (this) {
      if (state == State.DRAINING) {
        int held = store.shuffles().size();
        boolean sealed = sealing != null && sealing.isDone();
        boolean timedOut = clock.millis() - drainStartedMs >= drainTimeout.toMillis();
        if ((held == 0 && sealed) || timedOut) {
          state = State.DRAINED;
          drainedReports = 0;
          if (!timedOut) {
            LOG.info("Worker {} drained: it holds no shuffle; telling the masters", worker);
          } else {
            LOG.warn(
                "Worker {}: the drain timed out after {} ({}) with {} shuffles still held{};"
                    + " reducers that still need them run their map stages again",
                worker,
                drainTimeout,
                WorkerOptions.DECOMMISSION_TIMEOUT.key(),
                held,
                sealed ? "" : " and its seal unfinished (a hung disk?)");
          }
          return; // The next round reports DRAINED.
        }
      } else if (state == State.DRAINED && !exitAsked) {
        drainedReports++;
        // A leader's answer after the DRAINED report was recorded says decommission; one that
        // says otherwise (include-worker came first) has already turned the worker back.
        if ((leaderAnswered && leaderSaysDecommission) || drainedReports >= DRAINED_REPORTS) {
          exitAsked = true;
          exitNow = true;
          if (!leaderAnswered) {
            LOG.warn(
                "Worker {} drained, but no master leader answered {} heartbeats: exiting anyway",
                worker,
                DRAINED_REPORTS);
          }
        }
      }
    }
    if (exitNow) {
      LOG.info("Worker {} is decommissioned: exiting", worker);
      exit.run();
    }
  }
}
