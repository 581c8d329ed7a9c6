package io.faro.master.service;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.WorkerId;
import io.faro.master.placement.DiskLoad;
import io.faro.master.placement.WorkerReport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * This master's memory of heartbeats: when each worker and app was last heard of, and each worker's
 * latest disk loads. Deliberately not replicated: heartbeats arrive every few seconds from every
 * worker and app, and logging them would flood the Raft log. Instead workers and apps send them to
 * every master, and every master, leader or follower, keeps what it received, so a new leader
 * places slots on fresh disk loads at once. For liveness a new leader still gives every worker and
 * app a grace period of one timeout (see {@link #startTerm}): it may have been cut off from them
 * before it was elected.
 *
 * <p>Thread-safe: written by RPC handlers on the event loops and by the liveness monitor. Times are
 * leader wall-clock milliseconds.
 */
public final class LoadView {
  /**
   * @param placed per disk index, partitions placed there since this heartbeat (the next one counts
   *     them as open, once reserved)
   */
  private record WorkerLoad(
      long lastHeartbeatMs,
      Map<Integer, DiskLoad> disks,
      WorkerReport said,
      AtomicIntegerArray placed) {
    WorkerLoad(long lastHeartbeatMs, Map<Integer, DiskLoad> disks) {
      this(lastHeartbeatMs, disks, WorkerReport.UNKNOWN);
    }

    WorkerLoad(long lastHeartbeatMs, Map<Integer, DiskLoad> disks, WorkerReport said) {
      this(
          lastHeartbeatMs,
          disks,
          said,
          // Indices come from the wire: a made-up one must not size an array.
          new AtomicIntegerArray(
              (int)
                  Math.min(
                      MAX_COUNTED_DISKS,
                      disks.keySet().stream()
                          .mapToLong(i -> Math.max(0L, i) + 1)
                          .max()
                          .orElse(0))));
    }

    WorkerLoad heardAt(long ms) {
      return new WorkerLoad(ms, disks, said, placed);
    }
  }

  /** Disks of one worker whose placements are counted between heartbeats (more than any has). */
  static final int MAX_COUNTED_DISKS = 1024;

  private final ConcurrentMap<WorkerId, WorkerLoad> workers = new ConcurrentHashMap<>();
  private final ConcurrentMap<AppId, Long> apps = new ConcurrentHashMap<>();

  /** Bytes each worker's latest heartbeat said it holds, per app; changed under heldLock. */
  private final Map<WorkerId, Map<AppId, Long>> heldBytes = new HashMap<>();

  /** Their sum per app over the workers, kept as they change: a quota check reads it per app. */
  private final ConcurrentMap<AppId, Long> heldByApp = new ConcurrentHashMap<>();

  private final Object heldLock = new Object();

  private volatile long term = -1;

  /**
   * When this master starts leading a new term: every last-heartbeat time becomes at least {@code
   * nowMs} (a grace period), disk loads are kept.
   */
  public synchronized void startTerm(long currentTerm, long nowMs) {
    if (currentTerm != term) {
      workers.replaceAll((w, load) -> load.heardAt(Math.max(load.lastHeartbeatMs(), nowMs)));
      apps.replaceAll((a, last) -> Math.max(last, nowMs));
      term = currentTerm;
    }
  }

  /** Most entries kept at once for ids the state does not hold (followers hear them first). */
  static final int MAX_UNKNOWN = 10_000;

  /**
   * A heartbeat of a worker the state does not hold (yet: a follower may hear it before it applies
   * the registration): only its time is kept, and only while fewer than {@link #MAX_UNKNOWN} such
   * entries are, so that made-up ids cost a bounded amount.
   */
  public void unknownWorkerHeartbeat(WorkerId worker, long nowMs, int knownWorkers) {
    if (workers.containsKey(worker) || workers.size() < knownWorkers + MAX_UNKNOWN) {
      workers.put(worker, new WorkerLoad(nowMs, Map.of()));
    }
  }

  /** As {@link #unknownWorkerHeartbeat} for an app the state does not hold. */
  public void unknownAppHeartbeat(AppId app, long nowMs, int knownApps) {
    if (apps.containsKey(app) || apps.size() < knownApps + MAX_UNKNOWN) {
      apps.put(app, nowMs);
    }
  }

  /** A heartbeat of a known worker: its disk loads and what it says it is doing. */
  public void workerHeartbeat(
      WorkerId worker, long nowMs, List<DiskLoad> disks, WorkerReport reported) {
    Map<Integer, DiskLoad> byIndex = new HashMap<>();
    disks.forEach(d -> byIndex.put(d.index(), d));
    workers.put(worker, new WorkerLoad(nowMs, Map.copyOf(byIndex), reported));
  }

  /**
   * What a worker's latest heartbeat said it holds of each app (its shuffles' bytes summed); an
   * older worker says nothing, which counts as nothing held.
   */
  public void workerHolds(WorkerId worker, Map<AppId, Long> bytesByApp) {
    synchronized (heldLock) {
      replaceHeld(worker, Map.copyOf(bytesByApp));
    }
  }

  // Under heldLock.
  private void replaceHeld(WorkerId worker, Map<AppId, Long> now) {
    Map<AppId, Long> before = now == null ? heldBytes.remove(worker) : heldBytes.put(worker, now);
    if (before != null) {
      before.forEach(
          (app, bytes) ->
              heldByApp.computeIfPresent(app, (a, sum) -> sum - bytes <= 0 ? null : sum - bytes));
    }
    if (now != null) {
      now.forEach((app, bytes) -> heldByApp.merge(app, bytes, Long::sum));
    }
  }

  /** Bytes the workers said they hold of {@code app}, summed over the workers heard from. */
  public long bytesHeld(AppId app) {
    return heldByApp.getOrDefault(app, 0L);
  }

  /**
   * A fresh registration: alive now and serving (a restarted worker registers before its first
   * heartbeat), disk loads unknown until the next heartbeat.
   */
  public void workerRegistered(WorkerId worker, long nowMs) {
    workers.put(worker, new WorkerLoad(nowMs, Map.of()));
  }

  /** What the worker's latest heartbeat said it was doing; SERVING when none said. */
  public WorkerReport reported(WorkerId worker) {
    WorkerLoad load = workers.get(worker);
    return load == null ? WorkerReport.UNKNOWN : load.said();
  }

  /** For each worker that committed partition files lately, their mean size in bytes. */
  public List<Long> recentPartitionSizes() {
    List<Long> sizes = new ArrayList<>();
    for (WorkerLoad load : workers.values()) {
      long files = load.said().recentCommittedFiles();
      if (files > 0) {
        sizes.add(load.said().recentCommittedBytes() / files);
      }
    }
    return sizes;
  }

  /** The worker's last heartbeat; a worker never heard of in this term starts at {@code nowMs}. */
  public long workerLastHeartbeat(WorkerId worker, long nowMs) {
    return workers.computeIfAbsent(worker, w -> new WorkerLoad(nowMs, Map.of())).lastHeartbeatMs();
  }

  /**
   * Latest disk loads by disk index, each counting as open the partitions placed on it since (a
   * disk's room must not be handed out again by every request until the next heartbeat); empty when
   * none were reported.
   */
  public Map<Integer, DiskLoad> diskLoads(WorkerId worker) {
    WorkerLoad load = workers.get(worker);
    if (load == null) {
      return Map.of();
    }
    Map<Integer, DiskLoad> disks = load.disks();
    AtomicIntegerArray placed = load.placed();
    Map<Integer, DiskLoad> counted = null;
    for (int i = 0; i < placed.length(); i++) {
      int more = placed.get(i);
      DiskLoad disk = disks.get(i);
      if (more > 0 && disk != null) {
        if (counted == null) {
          counted = new HashMap<>(disks);
        }
        counted.put(i, disk.withMorePartitions(more));
      }
    }
    return counted == null ? disks : counted;
  }

  /** Counts {@code locations} (and their replicas) on their disks until the next heartbeats. */
  public void placed(List<PartitionLocation> locations) {
    for (PartitionLocation location : locations) {
      count(location);
      location.replica().ifPresent(this::count);
    }
  }

  private void count(PartitionLocation location) {
    WorkerLoad load = workers.get(location.worker());
    int disk = location.diskIndex();
    if (load != null && disk >= 0 && disk < load.placed().length()) {
      load.placed().incrementAndGet(disk);
    }
  }

  public Map<WorkerId, Long> workerHeartbeats() {
    Map<WorkerId, Long> times = new HashMap<>();
    workers.forEach((worker, load) -> times.put(worker, load.lastHeartbeatMs()));
    return times;
  }

  public void forgetWorker(WorkerId worker) {
    workers.remove(worker);
    synchronized (heldLock) {
      replaceHeld(worker, null);
    }
  }

  public void appHeartbeat(AppId app, long nowMs) {
    apps.put(app, nowMs);
  }

  /** The app's last heartbeat; an app never heard of in this term starts at {@code nowMs}. */
  public long appLastHeartbeat(AppId app, long nowMs) {
    return apps.computeIfAbsent(app, a -> nowMs);
  }

  public void forgetApp(AppId app) {
    apps.remove(app);
  }

  /** Drops entries of workers and apps the state no longer holds as alive / registered. */
  public void retain(Set<WorkerId> aliveWorkers, Set<AppId> registeredApps) {
    workers.keySet().retainAll(aliveWorkers);
    synchronized (heldLock) {
      for (WorkerId gone :
          heldBytes.keySet().stream().filter(w -> !aliveWorkers.contains(w)).toList()) {
        replaceHeld(gone, null);
      }
    }
    apps.keySet().retainAll(registeredApps);
  }

  /**
   * On a master that does not lead: drops entries of workers and apps its state does not hold that
   * were last heard before {@code nowMs - maxAgeMs}. A follower records heartbeats before it
   * applied the registration they follow, so unknown ones are kept for a while; without this, any
   * id ever heard would stay forever (a heartbeat costs its sender nothing).
   */
  public void pruneUnknown(
      Set<WorkerId> knownWorkers, Set<AppId> knownApps, long nowMs, long maxAgeMs) {
    long oldest = nowMs - maxAgeMs;
    workers
        .entrySet()
        .removeIf(
            e -> !knownWorkers.contains(e.getKey()) && e.getValue().lastHeartbeatMs() < oldest);
    apps.entrySet().removeIf(e -> !knownApps.contains(e.getKey()) && e.getValue() < oldest);
  }

  /** Entries held, workers and apps (for tests and status). */
  public int size() {
    return workers.size() + apps.size();
  }
}
