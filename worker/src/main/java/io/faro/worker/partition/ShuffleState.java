package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.worker.replicate.ReplicaLink;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskReader;
import io.faro.worker.storage.ReadAhead;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * The partition locations one shuffle has on this worker (a writer for each that received a part,
 * the idle ones in {@link IdleLocations}), and its commit.
 *
 * <p>Threads: {@code writers} is read lock-free by pushes and fetches. Adding locations, a
 * location's first part (its writer made from its idle entry), starting the commit and expiring are
 * the rare transitions; they happen under {@code this}, so that a reservation or a first part never
 * slips in after the commit or the expiry has taken its snapshot of locations.
 */
final class ShuffleState {
  final ShuffleId id;

  /** The locations that received a part. */
  final Map<PartitionKey, PartitionWriter> writers = new ConcurrentHashMap<>();

  /** The locations reserved that received nothing yet; its writer comes with the first part. */
  // @GuardedBy("this")
  final IdleLocations idle = new IdleLocations();

  /** The replica links of idle locations, by the index each holds. */
  // @GuardedBy("this")
  private final List<ReplicaLink> links = new ArrayList<>();

  /** Locations an earlier run of this worker committed, served again after a restart. */
  final Map<PartitionKey, RestoredPartition> restored = new ConcurrentHashMap<>();

  /** Locations an earlier run committed (or sealed) with nothing; set once, at restore. */
  volatile LocationKeys restoredEmpty = LocationKeys.NONE;

  /** The writers that hold a replica copy (read only when the primary copy is lost). */
  final Set<PartitionKey> replicaCopies = ConcurrentHashMap.newKeySet();

  /** The runs of this shuffle, by disk index and role (replica copies: odd), on runs disks. */
  private final Map<Integer, ShuffleRuns> runs = new ConcurrentHashMap<>();

  /** The number of the next run of this shuffle (on any disk); above every restored run's. */
  private final AtomicInteger nextRun = new AtomicInteger();

  /**
   * The index of {@code link} among this shuffle's links, added if new; -1 when the shuffle has
   * {@link IdleLocations#MAX_LINKS} already (its location then gets a writer at once).
   */
  // @GuardedBy("this")
  int linkIndex(ReplicaLink link) {
    for (int i = 0; i < links.size(); i++) {
      if (links.get(i) == link) {
        return i;
      }
    }
    if (links.size() >= IdleLocations.MAX_LINKS) {
      return -1;
    }
    links.add(link);
    return links.size() - 1;
  }

  /** The link at {@code index} (see {@link #linkIndex}). */
  // @GuardedBy("this")
  ReplicaLink link(int index) {
    return links.get(index);
  }

  /** Whether {@code key} is an idle location (open or sealed). */
  synchronized boolean isIdle(PartitionKey key) {
    return idle.contains(key.partition(), key.epoch());
  }

  /** Whether {@code key} is an idle location that was not sealed: its first part may come. */
  synchronized boolean isOpenIdle(PartitionKey key) {
    IdleLocations.Idle entry = idle.get(key.partition(), key.epoch());
    return entry != null && !entry.sealed();
  }

  /** Locations held: with a writer or idle. */
  // @GuardedBy("this")
  int locations() {
    return writers.size() + idle.size();
  }

  /**
   * The locations committed with nothing (the idle ones, and those an earlier run recorded empty):
   * what a commit or seal answers as empty.
   */
  // @GuardedBy("this")
  LocationKeys emptyLocations() {
    LocationKeys idleKeys = idle.keys();
    if (restoredEmpty.isEmpty()) {
      return idleKeys;
    }
    long[] both = new long[idleKeys.size() + restoredEmpty.size()];
    long[] idleArray = idleKeys.toArray();
    System.arraycopy(idleArray, 0, both, 0, idleArray.length);
    long[] restoredArray = restoredEmpty.toArray();
    System.arraycopy(restoredArray, 0, both, idleArray.length, restoredArray.length);
    return LocationKeys.of(both);
  }

  /** The runs that a location of {@code replicaCopy} role on {@code disk} writes into. */
  // @GuardedBy("this")
  ShuffleRuns runs(Disk disk, boolean replicaCopy, WriterSettings settings) {
    return runs.computeIfAbsent(
        disk.index() * 2 + (replicaCopy ? 1 : 0),
        k -> new ShuffleRuns(id, disk, replicaCopy, settings, nextRun::getAndIncrement));
  }

  /** Closes every runs of this shuffle; completes once none writes any more (see expiry). */
  CompletableFuture<Void> closeRuns() {
    return CompletableFuture.allOf(
        runs.values().stream().map(ShuffleRuns::close).toArray(CompletableFuture[]::new));
  }

  /** Numbers new runs above {@code run} (one an earlier run of this worker wrote). */
  void runRestored(int run) {
    nextRun.accumulateAndGet(run + 1, Math::max);
  }

  /**
   * Finishes every writer with {@code finish} (commit or seal), holding the runs meanwhile so that
   * the writers' last parts make one run per disk and role.
   */
  // @GuardedBy("this")
  List<CompletableFuture<PartitionCommit>> finishAll(
      Function<PartitionWriter, CompletableFuture<PartitionCommit>> finish) {
    List<ShuffleRuns> held = List.copyOf(runs.values());
    held.forEach(ShuffleRuns::hold);
    try {
      return new ArrayList<>(writers.values().stream().map(finish).toList());
    } finally {
      held.forEach(ShuffleRuns::release);
    }
  }

  /** What to read ahead as reducers fetch; made at the first fetch after the commit. */
  private volatile ReadAhead readAhead;

  /**
   * The read-ahead plan of this shuffle's primary copies here, made once every location has its
   * commit outcome; null until then (asked again at the next fetch), and once expired.
   *
   * @param readers the reader of each disk, by index
   */
  ReadAhead readAhead(IntFunction<DiskReader> readers) {
    ReadAhead plan = readAhead;
    if (plan != null) {
      return plan;
    }
    synchronized (this) {
      if (readAhead != null || !commitStarted || expired) {
        return readAhead;
      }
      List<ReadAhead.Target> targets = new ArrayList<>();
      for (Map.Entry<PartitionKey, PartitionWriter> e : writers.entrySet()) {
        CompletableFuture<PartitionCommit> outcome = e.getValue().commitOutcome().orElse(null);
        if (outcome == null || !outcome.isDone()) {
          return null;
        }
        if (!replicaCopies.contains(e.getKey())
            && outcome.join() instanceof PartitionCommit.Committed c) {
          addTarget(targets, c, readers.apply(e.getValue().diskIndex()));
        }
      }
      // Restored locations' roles are not recorded: every one is read ahead.
      restored.values().forEach(r -> addTarget(targets, r.commit(), readers.apply(r.diskIndex())));
      readAhead = new ReadAhead(targets);
      return readAhead;
    }
  }

  private static void addTarget(
      List<ReadAhead.Target> targets, PartitionCommit.Committed c, DiskReader reader) {
    if (c.file().isPresent() && c.bytes() > 0) {
      targets.add(new ReadAhead.Target(c.key(), c.file().get(), c.bytes(), reader));
    }
  }

  // @GuardedBy("this")
  CompletableFuture<ShuffleCommit> commit;
  // @GuardedBy("this")
  boolean expired;

  // Written under this; read lock-free by pushes to tell STAGE_ENDED from NOT_HERE.
  volatile boolean commitStarted;

  /** The token of a caller that proves no ownership (tests and tools that reserve directly). */
  static final long NO_OWNER = 0;

  /** The owner token of the first reservation; NO_OWNER until one came. */
  // @GuardedBy("this")
  private long ownerToken = NO_OWNER;

  /** The app registration (nonce) of the first reservation that proved one; "" until then. */
  private volatile String appNonce = "";

  /** See {@link #appNonce}; read lock-free by every request's authorization check. */
  String appNonce() {
    return appNonce;
  }

  /** Records the registration of the first reservation that proved one. */
  // @GuardedBy("this")
  void claimAppNonce(String nonce) {
    if (appNonce.isEmpty()) {
      appNonce = nonce;
    }
  }

  ShuffleState(ShuffleId id) {
    this.id = requireNonNull(id, "id is null");
  }

  /**
   * Refuses {@code token} when the shuffle was reserved with another one. A shuffle reserved
   * without a token (tests, tools) takes any.
   */
  // @GuardedBy("this")
  void checkOwner(long token, String what) {
    if (ownerToken != NO_OWNER && token != ownerToken) {
      throw new FaroException(
          ErrorCode.NOT_OWNER,
          what
              + " of shuffle "
              + id
              + " refused: it does not come from the "
              + "lifecycle manager that reserved the shuffle (another owner token)");
    }
  }

  /** The owner token of the first reservation, or NO_OWNER. */
  // @GuardedBy("this")
  long ownerToken() {
    return ownerToken;
  }

  /** Records the owner of the first reservation that carried a token. */
  // @GuardedBy("this")
  void claimOwner(long token) {
    if (ownerToken == NO_OWNER) {
      ownerToken = token;
    }
  }
}
