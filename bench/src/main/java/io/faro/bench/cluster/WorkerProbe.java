package io.faro.bench.cluster;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.WorkerStatusP;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The cluster's alive workers, found through the masters, and their own accounting: a {@code
 * WorkerStatusRequest} on each worker's RPC port. Borrows the pool.
 */
public final class WorkerProbe {
  private static final Duration POLL = Duration.ofMillis(200);

  /** A worker and where its RPC port is. */
  public record Worker(String id, HostPort rpc) {
    public Worker {
      requireNonNull(id, "id is null");
      requireNonNull(rpc, "rpc is null");
    }
  }

  private final ClientPool pool;
  private final List<Worker> workers;
  private final Duration timeout;

  public WorkerProbe(ClientPool pool, List<Worker> workers, Duration timeout) {
    this.pool = requireNonNull(pool, "pool is null");
    this.workers = List.copyOf(workers);
    this.timeout = requireNonNull(timeout, "timeout is null");
  }

  /**
   * The alive workers the masters know, once there are at least {@code atLeast} (and at least one).
   *
   * @throws FaroException NO_AVAILABLE_WORKERS when they are not there within {@code timeout}
   */
  public static List<Worker> discover(MasterClient masters, int atLeast, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    int wanted = Math.max(1, atLeast);
    while (true) {
      ClusterStatusResponse status =
          masters.callBlocking(
              ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
      List<Worker> alive = new ArrayList<>();
      for (WorkerStatusP w : status.getWorkersList()) {
        if (w.getAlive()) {
          alive.add(
              new Worker(
                  w.getWorkerId(),
                  new HostPort(w.getEndpoint().getHost(), w.getEndpoint().getRpcPort())));
        }
      }
      if (alive.size() >= wanted) {
        return alive;
      }
      if (System.nanoTime() > deadline) {
        throw new FaroException(
            ErrorCode.NO_AVAILABLE_WORKERS,
            "the masters "
                + masters.endpoints()
                + " know "
                + alive.size()
                + " alive workers after "
                + timeout.toSeconds()
                + "s, the benchmark needs "
                + wanted);
      }
      try {
        Thread.sleep(POLL.toMillis()); // registration has no event to wait on from here
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new FaroException(ErrorCode.INTERNAL, "interrupted while waiting for workers", e);
      }
    }
  }

  public List<Worker> workers() {
    return workers;
  }

  /** One reading per worker, in {@link #workers()} order; asks them all at once. */
  public List<WorkerReading> read() {
    List<CompletableFuture<WorkerStatusResponse>> answers = new ArrayList<>();
    for (Worker w : workers) {
      answers.add(
          pool.call(w.rpc(), WorkerStatusRequest.getDefaultInstance(), WorkerStatusResponse.class));
    }
    List<WorkerReading> readings = new ArrayList<>();
    for (int i = 0; i < workers.size(); i++) {
      Worker w = workers.get(i);
      WorkerStatusResponse s =
          Futures.await(answers.get(i), timeout, "status of worker " + w.id() + " at " + w.rpc());
      readings.add(
          new WorkerReading(
              w.id(),
              s.getProcessCpuNanos(),
              s.getRssBytes(),
              s.getPeakRssBytes(),
              s.getDirectMemoryBytes(),
              s.getPeakDirectMemoryBytes(),
              s.getMemoryBudgetUsedBytes(),
              s.getPeakMemoryBudgetUsedBytes(),
              s.getMemoryPauseBytes(),
              s.getMemoryPauses(),
              s.getMemoryPausedMs(),
              s.getHeapUsedBytes(),
              s.getDiskIoModesList()));
    }
    return readings;
  }
}
