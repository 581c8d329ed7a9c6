package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.client.ClientSettings;
import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import io.faro.client.protocol.DriverProto;
import io.faro.client.protocol.DriverProto.Commit;
import io.faro.client.protocol.DriverProto.CommittedCopy;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits generations on the workers and keeps what readers are answered: the file groups of each
 * generation (the winning attempt of every map, every committed file, the batches expected per
 * partition, the partitions lost), once its commit ended or it was abandoned. Built once per
 * generation, answered to every reducer from there.
 */
final class Committer {
  private static final Logger LOG = LoggerFactory.getLogger(Committer.class);

  /**
   * Commits of one shuffle on one worker before it fails; only retryable failures are tried again.
   */
  private static final int ATTEMPTS = 3;

  /**
   * How often a worker that refuses connections is asked again for a commit while it may be
   * restarting: a refused connection costs it nothing, and a worker back from a restart (about 2 s)
   * is found within a quarter of a second.
   */
  private static final long RESTART_POLL_MILLIS = 250;

  private final ClientSettings settings;
  private final ClientPool pool;
  private final CommitWatch watch;

  /** The file groups of each generation by Faro shuffle id, complete once known. */
  private final Map<Integer, CompletableFuture<CommittedFiles>> fileGroups =
      new ConcurrentHashMap<>();

  Committer(ClientSettings settings, ClientPool pool, CommitWatch watch) {
    this.settings = requireNonNull(settings, "settings is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.watch = requireNonNull(watch, "watch is null");
  }

  /** The file groups of {@code g}: complete once its commit ended, or it was abandoned. */
  CompletableFuture<CommittedFiles> fileGroups(Generation g) {
    return fileGroups.computeIfAbsent(g.id().shuffle(), id -> new CompletableFuture<>());
  }

  /**
   * Answers the generation's readers with every partition lost, without a commit: some map will
   * never end in it. The workers' files go when the shuffle is unregistered.
   */
  void abandon(Generation g) {
    fileGroups(g).complete(CommittedFiles.abandoned(g));
  }

  /** Forgets {@code g}'s file groups; readers still waiting for them are told it is unknown. */
  void forget(Generation g) {
    CompletableFuture<CommittedFiles> f = fileGroups.remove(g.id().shuffle());
    if (f != null) {
      f.completeExceptionally(
          new FaroException(
              ErrorCode.UNKNOWN_SHUFFLE,
              "shuffle " + g.id() + " was unregistered before its commit ended"));
    }
  }

  /**
   * Flushes and closes the generation's files on every worker that holds a copy of some location
   * with data (of a partition some winning attempt pushed to), then completes its file groups.
   * Commit is idempotent on the workers, so a retryable failure (a connection reset, a timeout) is
   * tried again on that worker, up to {@link #ATTEMPTS} times. A worker that still fails loses only
   * its copies: a partition is lost when some epoch of it has no committed copy, and its reducers
   * then fail with DATA_LOST (the engine re-runs the map stage); the others read.
   */
  CompletableFuture<CommittedFiles> commit(Generation g) {
    CompletableFuture<CommittedFiles> answer = fileGroups(g);
    g.placementsEnded()
        .thenCompose(
            v -> {
              // Only partitions some winning attempt pushed to: the others have nothing to read,
              // and a worker that holds only such partitions is not waited for (a shuffle whose
              // maps wrote nothing is answered without a request).
              List<PartitionLocation> all = g.locations().all();
              List<PartitionLocation> locations =
                  all.stream().filter(l -> g.expectedBatches(l.partition()) > 0).toList();
              Map<WorkerId, List<PartitionLocation>> byWorker = Locations.copiesByWorker(locations);
              answer.whenComplete((files, error) -> closeIdle(g, all, byWorker.keySet()));
              Map<WorkerId, CompletableFuture<Commit>> commits = new LinkedHashMap<>();
              byWorker.forEach(
                  (worker, locs) -> {
                    HostPort rpc = locs.get(0).endpoint().rpc();
                    // Worth waiting for a restart only where this worker holds the only copy.
                    // (A replica's primary is elsewhere; a primary without a replica is alone.)
                    boolean soleCopy =
                        locs.stream()
                            .anyMatch(l -> l.role() == Role.PRIMARY && l.replica().isEmpty());
                    CompletableFuture<Commit> commit =
                        commitOn(
                            g,
                            worker,
                            rpc,
                            locs,
                            1,
                            System.nanoTime() + settings.commitTimeout().toNanos(),
                            soleCopy ? settings.workerRestartWait().toNanos() : 0,
                            0);
                    commits.put(worker, commit);
                    watch.watch(g.id(), worker, commit);
                  });
              return CompletableFuture.allOf(
                      commits.values().stream()
                          .map(f -> f.exceptionally(e -> null))
                          .toArray(CompletableFuture[]::new))
                  .thenApply(done -> committedFiles(g, locations, commits));
            })
        .whenComplete(
            (files, error) -> {
              if (error != null) {
                answer.completeExceptionally(error);
              } else {
                answer.complete(files);
              }
            });
    return answer;
  }

  /**
   * Commits, once readers have their answer and without waiting for it, the workers of {@code all}
   * locations that the commit did not ask ({@code asked}: they hold only partitions no winner
   * pushed to). Nothing of theirs is read; the commit closes their empty locations, so that they no
   * longer count as open partitions in the workers' load, and answers a late attempt's pushes
   * STAGE_ENDED, as on every other worker. A failure costs nothing but a debug line.
   */
  private void closeIdle(Generation g, List<PartitionLocation> all, Set<WorkerId> asked) {
    Map<WorkerId, List<PartitionLocation>> idle = new LinkedHashMap<>();
    Locations.copiesByWorker(all)
        .forEach(
            (worker, locs) -> {
              if (!asked.contains(worker)) {
                idle.put(worker, locs);
              }
            });
    idle.forEach(
        (worker, locs) ->
            commit(g, locs.get(0).endpoint().rpc(), List.of(), null)
                .whenComplete(
                    (r, e) -> {
                      if (e != null) {
                        LOG.debug(
                            "Closing the empty locations of shuffle {} on worker {} failed: {}",
                            g.id(),
                            worker,
                            Futures.unwrap(e).toString());
                      }
                    }));
  }

  /**
   * Commits on one worker, retrying what is retryable until {@code deadlineNanos}: all attempts
   * together take at most faro.client.commit.timeout, the time readers wait for the commit, so a
   * hung worker's copies are given up on before the readers give up on the whole shuffle. A worker
   * that refuses connections (down, maybe restarting: a restarted worker answers a commit from its
   * records) and holds the only copy of some location is asked again every quarter second for
   * {@code restartWaitNanos} (faro.client.worker.restart.wait), without spending attempts; with
   * other copies of everything it holds, it is given up on at once.
   */
  private CompletableFuture<Commit> commitOn(
      Generation g,
      WorkerId worker,
      HostPort rpc,
      List<PartitionLocation> asked,
      int attempt,
      long deadlineNanos,
      long restartWaitNanos,
      long refusedSinceNanos) {
    Duration left = Duration.ofNanos(Math.max(1_000_000, deadlineNanos - System.nanoTime()));
    return commit(g, rpc, asked, left)
        .handle(
            (response, error) -> {
              if (error == null) {
                return CompletableFuture.completedFuture(response);
              }
              Throwable cause = Futures.unwrap(error);
              long now = System.nanoTime();
              if (Futures.connectionRefused(cause)) {
                long since = refusedSinceNanos != 0 ? refusedSinceNanos : now;
                boolean waiting = now - since < restartWaitNanos;
                if (waiting && deadlineNanos - now > TimeUnit.SECONDS.toNanos(1)) {
                  if (refusedSinceNanos == 0) {
                    LOG.warn(
                        "Commit of shuffle {}: worker {} refuses connections; asking again every"
                            + " second for up to {} s ({})",
                        g.id(),
                        worker,
                        settings.workerRestartWait().toSeconds(),
                        ClientOptions.WORKER_RESTART_WAIT.key());
                  }
                  return CompletableFuture.supplyAsync(
                          () -> null,
                          CompletableFuture.delayedExecutor(
                              RESTART_POLL_MILLIS, TimeUnit.MILLISECONDS))
                      .thenCompose(
                          x ->
                              commitOn(
                                  g,
                                  worker,
                                  rpc,
                                  asked,
                                  attempt,
                                  deadlineNanos,
                                  restartWaitNanos,
                                  since));
                }
              }
              boolean timeLeft = deadlineNanos - now > TimeUnit.SECONDS.toNanos(attempt);
              if (attempt >= ATTEMPTS
                  || !timeLeft
                  || !(cause instanceof FaroException fe)
                  || !fe.retryable()) {
                LOG.warn(
                    "Commit of shuffle {} on worker {} failed ({} attempts): {}",
                    g.id(),
                    worker,
                    attempt,
                    cause.getMessage());
                return CompletableFuture.<Commit>failedFuture(cause);
              }
              LOG.warn(
                  "Commit of shuffle {} on worker {} failed (attempt {} of {}), retrying: {}",
                  g.id(),
                  worker,
                  attempt,
                  ATTEMPTS,
                  cause.getMessage());
              return CompletableFuture.supplyAsync(
                      () -> null, CompletableFuture.delayedExecutor(attempt, TimeUnit.SECONDS))
                  .thenCompose(
                      x ->
                          commitOn(
                              g,
                              worker,
                              rpc,
                              asked,
                              attempt + 1,
                              deadlineNanos,
                              restartWaitNanos,
                              refusedSinceNanos));
            })
        .thenCompose(f -> f);
  }

  private CommittedFiles committedFiles(
      Generation g,
      List<PartitionLocation> locations,
      Map<WorkerId, CompletableFuture<Commit>> commits) {
    List<CommittedFile> files = new ArrayList<>();
    // What each worker committed, by (partition, epoch); a worker whose commit failed has nothing.
    Map<WorkerId, Map<Long, CommittedCopy>> committed = new HashMap<>();
    commits.forEach(
        (worker, f) -> {
          Map<Long, CommittedCopy> byKey = new HashMap<>();
          if (!f.isCompletedExceptionally()) {
            Commit response = f.join();
            response.committed().forEach(c -> byKey.put(key(c.partition(), c.epoch()), c));
            for (DriverProto.FailedCopy failed : response.failed()) {
              LOG.warn(
                  "Worker {} lost partition {} epoch {} of shuffle {} (its file failed)",
                  worker,
                  failed.partition(),
                  failed.epoch(),
                  g.id());
            }
          }
          committed.put(worker, byKey);
        });
    long bytes = 0;
    SortedSet<Integer> lost = new TreeSet<>();
    for (PartitionLocation location : locations) {
      boolean anyCopy = false;
      for (PartitionLocation copy : location.copies()) {
        // A location the worker does not report (it restarted, or expired the shuffle) held data
        // that is gone, like one on a worker that did not answer.
        CommittedCopy c =
            committed
                .getOrDefault(copy.worker(), Map.of())
                .get(key(copy.partition(), copy.epoch()));
        if (c == null) {
          continue;
        }
        anyCopy = true;
        if (c.bytes() > 0) {
          files.add(new CommittedFile(copy, c.bytes(), c.chunks()));
          bytes +=
              copy.role() == Role.PRIMARY ? c.bytes() : 0; // the shuffle's bytes, not its copies'
        }
      }
      if (!anyCopy) {
        lost.add(location.partition());
      }
    }
    if (!lost.isEmpty()) {
      LOG.warn(
          "Shuffle {} committed with {} partitions lost on every copy (for example {}): their reducers "
              + "fail and the map stage runs again",
          g.id(),
          lost.size(),
          lost.first());
    }
    LOG.info("Shuffle {} committed: {} files, {} bytes", g.id(), files.size(), bytes);
    return CommittedFiles.committed(g, files, lost.stream().mapToInt(Integer::intValue).toArray());
  }

  /**
   * Commits {@code g} on the worker at {@code rpc}, proven by its owner token, waiting up to {@code
   * timeout} (the pool's own when null); the answer reports the {@code asked} copies, there.
   */
  private CompletableFuture<Commit> commit(
      Generation g, HostPort rpc, List<PartitionLocation> asked, Duration timeout) {
    return DriverProto.commit(pool, rpc, g.id(), g.ownerToken(), asked, timeout);
  }

  private static long key(int partition, int epoch) {
    return ((long) partition << 32) | (epoch & 0xffffffffL);
  }
}
