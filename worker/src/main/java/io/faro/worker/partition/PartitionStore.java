package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.HostPort;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.replicate.ReplicaLink;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.ReadAhead;
import io.netty.buffer.ByteBuf;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every partition location this worker holds, by shuffle: reservations hold locations, a location's
 * first part makes its writer, pushes append to it, a commit closes a shuffle's writers and keeps
 * their files for fetches, and an expiry deletes them; a worker on its way out seals them ({@link
 * ShuffleSealer}), and a restarted one restores what it committed or sealed. Thread-safe; see
 * {@link ShuffleState} and {@link PartitionWriter}.
 *
 * <p>The jobs are in their own classes, over the one map of shuffles this class owns and under each
 * shuffle's lock: reservation (its limits, the choice of disk, the refusal while the worker leaves)
 * in {@link Reservations}, sealing in {@link ShuffleSealer}, commit and its record and the lookup
 * of committed locations in {@link ShuffleCommitter}, expiry in {@link ShuffleExpiry}, the counts
 * over every location in {@link StoreCensus}. Append and restore stay here.
 *
 * <p>A little over 400 lines, as the store's one public face: most methods are a few lines that
 * hand their call to the class of its job, and stay here with the contract callers read.
 */
public final class PartitionStore implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionStore.class);

  private static final Comparator<RestoredPartition> RESTORED_ORDER =
      Comparator.comparingInt((RestoredPartition r) -> r.commit().key().partition())
          .thenComparingInt(r -> r.commit().key().epoch());

  private final Disks disks;
  private final WriterSettings settings;
  private final Reservations reservations;
  private final Map<ShuffleId, ShuffleState> shuffles = new ConcurrentHashMap<>();
  private final TrafficCounters counters = new TrafficCounters();
  private volatile CommitLog commitLog = CommitLog.NONE;

  /**
   * The one thread that writes the commit log (seals, commits, forgetting a shuffle), in the order
   * they were decided: the first disk's first flusher thread. Never a network thread.
   */
  private final Executor recorder;

  private final ShuffleSealer sealer;
  private final ShuffleCommitter committer;
  private final ShuffleExpiry expiry;

  public PartitionStore(Disks disks, WriterSettings settings) {
    this(
        disks,
        settings,
        peer -> {
          throw new FaroException(
              ErrorCode.INVALID_REQUEST, "this store does not replicate (to " + peer + ")");
        });
  }

  /**
   * @param replicaLinks the live link to a replica peer, by its push address
   */
  public PartitionStore(
      Disks disks, WriterSettings settings, Function<HostPort, ReplicaLink> replicaLinks) {
    this(disks, settings, replicaLinks, ReservationLimits.DEFAULT);
  }

  public PartitionStore(
      Disks disks,
      WriterSettings settings,
      Function<HostPort, ReplicaLink> replicaLinks,
      ReservationLimits limits) {
    this.disks = requireNonNull(disks, "disks is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.reservations = new Reservations(disks, settings, replicaLinks, limits);
    // Records on a disk thread, and reads the commit log when it records (set after start).
    this.recorder = disks.get(0).flusher().anyThread();
    this.sealer = new ShuffleSealer(recorder, () -> commitLog, counters);
    this.committer = new ShuffleCommitter(disks, recorder, () -> commitLog, counters);
    this.expiry = new ShuffleExpiry(disks, recorder, () -> commitLog);
  }

  /** Records every commit in {@code log} from now on, before the commit completes. */
  public void recordCommitsIn(CommitLog log) {
    this.commitLog = requireNonNull(log, "log is null");
  }

  /**
   * Serves again what an earlier run of this worker committed for {@code shuffle} (reserved with
   * {@code ownerToken} by the app registration {@code appNonce}, "" for none): its locations read
   * as committed, a commit of it answers them, and its expiry deletes their files. With {@code
   * sealed}, the earlier run sealed the locations on its way out while the shuffle was still
   * pushed: the shuffle takes new reservations, pushes to the sealed locations are answered SPLIT,
   * and its commit answers the sealed files together with what the new locations received. At
   * start, before the worker serves requests.
   */
  public void restore(
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      List<RestoredPartition> partitions,
      boolean sealed) {
    restore(shuffle, ownerToken, appNonce, partitions, LocationKeys.NONE, sealed);
  }

  /** As above, with {@code empty}: the locations the earlier run committed with nothing. */
  public void restore(
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      List<RestoredPartition> partitions,
      LocationKeys empty,
      boolean sealed) {
    ShuffleState state = shuffles.computeIfAbsent(shuffle, ShuffleState::new);
    counters.restored(partitions.size() + empty.size(), sealed);
    synchronized (state) {
      state.claimOwner(ownerToken);
      state.claimAppNonce(appNonce);
      partitions.forEach(p -> state.restored.put(p.commit().key(), p));
      state.restoredEmpty = empty;
      // A commit's answer walks its locations in (partition, epoch) order.
      List<RestoredPartition> sorted = partitions.stream().sorted(RESTORED_ORDER).toList();
      // New runs of a sealed shuffle must not take the name of one the restored locations read.
      partitions.forEach(
          p -> p.commit().data().files().forEach(f -> state.runRestored(FileLayout.runNumber(f))));
      if (!sealed) {
        state.commitStarted = true;
        state.commit =
            CompletableFuture.completedFuture(
                new ShuffleCommit(
                    sorted.stream().map(RestoredPartition::commit).toList(), List.of(), empty));
      }
    }
  }

  /**
   * From now on every reservation is refused with SHUTTING_DOWN (retryable: the lifecycle manager
   * places the partitions on another worker), saying {@code why}.
   */
  public void refuseReservations(String why) {
    reservations.refuse(why);
  }

  /** Takes reservations again (a drain was cancelled). */
  public void takeReservations() {
    reservations.take();
  }

  /**
   * Seals every open location of every shuffle that is not committed (see {@link ShuffleSealer}):
   * what was acknowledged is written, indexed and recorded (synced too with
   * faro.worker.commit.sync), later pushes are answered SPLIT. Call {@link #refuseReservations}
   * first, so that no location is added behind it. The future completes once every file is sealed
   * and recorded.
   */
  public CompletableFuture<SealReport> sealAll() {
    return sealer.sealAll(shuffles.values());
  }

  /** As {@link #reserve(ShuffleId, long, List)} for an owner that proves nothing (tests, tools). */
  public void reserve(ShuffleId shuffle, List<Reservation> reservations) {
    reserve(shuffle, ShuffleState.NO_OWNER, reservations);
  }

  /**
   * Holds every location not held yet, idle until its first part makes its writer; existing ones
   * stay (idempotent). No file is created until data is flushed. All or nothing. The first
   * reservation of a shuffle records {@code ownerToken}: later reservations and the commit must
   * carry the same.
   *
   * @throws FaroException INVALID_REQUEST for a disk index this worker does not have or a shuffle
   *     that is already committed; LIMIT_EXCEEDED beyond faro.worker.reserve.max.locations or
   *     faro.worker.max.partitions; NOT_OWNER for another owner's token
   */
  public void reserve(ShuffleId shuffle, long ownerToken, List<Reservation> reservations) {
    reserve(shuffle, ownerToken, "", reservations);
  }

  /**
   * The registration nonce of the app that reserved {@code shuffle} here, or "" (no reservation
   * proved one, or the shuffle is not here): see {@code AppAccess}.
   */
  public String appNonce(ShuffleId shuffle) {
    ShuffleState state = shuffles.get(shuffle);
    return state == null ? "" : state.appNonce();
  }

  /**
   * As {@link #reserve(ShuffleId, long, List)}, by the app registration {@code appNonce} ("" when
   * the connection proved none): the first that proves one holds the shuffle from then on.
   */
  public void reserve(
      ShuffleId shuffle, long ownerToken, String appNonce, List<Reservation> requested) {
    reservations.reserve(shuffles, shuffle, ownerToken, appNonce, requested);
  }

  /** Refuses a reservation request larger than faro.worker.reserve.max.locations. */
  public void checkReserveSize(ShuffleId shuffle, int locations) {
    reservations.checkSize(shuffle, locations);
  }

  /** Partition locations held now, of every shuffle: idle or written. */
  public int heldLocations() {
    return reservations.held();
  }

  /** Of those, the ones that received a part. */
  public int writtenLocations() {
    return reservations.written();
  }

  /**
   * The writer of {@code key}, if this worker holds that location and it takes data or received
   * some: an idle location gets its writer here, at its first part.
   */
  public Optional<PartitionWriter> writer(PartitionKey key) {
    return writer(key, "");
  }

  /**
   * Whether this worker holds location {@code key} and it still takes data: open, or idle and not
   * sealed, committed or expired. Makes no writer.
   */
  public boolean takesData(PartitionKey key) {
    ShuffleState state = shuffles.get(key.shuffle());
    if (state == null) {
      return false;
    }
    synchronized (state) {
      PartitionWriter writer = state.writers.get(key);
      if (writer != null) {
        return writer.isOpen();
      }
      IdleLocations.Idle idle = state.idle.get(key.partition(), key.epoch());
      return idle != null && !idle.sealed() && !state.commitStarted && !state.expired;
    }
  }

  /**
   * The writer of {@code key} for a push by the app registration {@code appNonce} ("" for none: a
   * member's forward, or authentication off), if this worker holds that location.
   *
   * @throws FaroException UNAUTHENTICATED when another registration of the app reserved it: the
   *     check before the push ran may have seen the shuffle before any reservation, and this one
   *     reads the nonce after the writer, which a reservation claims before it adds writers
   */
  public Optional<PartitionWriter> writer(PartitionKey key, String appNonce) {
    ShuffleState state = shuffles.get(key.shuffle());
    if (state == null) {
      return Optional.empty();
    }
    // Checked before an idle location gets its writer: a stranger's part must not make one.
    if (!appNonce.isEmpty()
        && !state.appNonce().isEmpty()
        && !state.appNonce().equals(appNonce)
        && (state.writers.containsKey(key) || state.isIdle(key))) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "shuffle " + key.shuffle() + " was reserved by another registration of its app");
    }
    PartitionWriter writer = state.writers.get(key);
    return Optional.ofNullable(writer != null ? writer : reservations.firstPart(state, key));
  }

  /**
   * Appends one validated part to the location {@code key}, cutting chunks by this worker's chunk
   * size: a part pushed to this worker, as the only one of its frame or with {@code charge} shared
   * by the frame's parts. Takes ownership of {@code part}; {@code charge} hears when it is
   * released.
   */
  public PushStatus append(PartitionKey key, ByteBuf part, FrameCharge charge) {
    return append(key, writer(key).orElse(null), part, charge, settings.chunkSize());
  }

  /**
   * Appends one validated part to {@code writer}, the writer {@link #writer} found for {@code key}
   * (null: the location is not here), cutting chunks by {@code chunkSize}: a replica is given its
   * primary's. Ownership of {@code part} and {@code charge} as above.
   */
  public PushStatus append(
      PartitionKey key, PartitionWriter writer, ByteBuf part, FrameCharge charge, long chunkSize) {
    if (writer == null) {
      ShuffleState state = shuffles.get(key.shuffle());
      part.release();
      charge.partReleased();
      if (state == null) {
        return PushStatus.NOT_HERE;
      }
      if (state.commitStarted) {
        return PushStatus.STAGE_ENDED;
      }
      // Idle while this worker holds as many written locations as it may: the client moves the
      // partition to another worker. (Read after the refusal: a race with an expiry that frees
      // room only makes the client move a partition it could have kept here.)
      if (reservations.writtenFull() && state.isOpenIdle(key)) {
        counters.fullAnswered();
        return PushStatus.WORKER_FULL;
      }
      // Sealed by an earlier run on its way out, or idle when this run sealed: the client moves
      // to a new location.
      return state.restored.containsKey(key)
              || state.restoredEmpty.contains(key.partition(), key.epoch())
              || state.isIdle(key)
          ? PushStatus.SPLIT
          : PushStatus.NOT_HERE;
    }
    int length = part.readableBytes();
    PushStatus status = writer.append(part, charge, chunkSize);
    if (status == PushStatus.OK || status == PushStatus.SOFT_SPLIT) {
      counters.appended(length);
    }
    if (status == PushStatus.SOFT_SPLIT || status == PushStatus.SPLIT) {
      counters.splitAnswered();
    }
    return status;
  }

  /** The disks partitions are written to. */
  public Disks disks() {
    return disks;
  }

  /** This worker's chunk size, which its replicas cut by too. */
  public long chunkSize() {
    return settings.chunkSize();
  }

  /** What went through this worker since start; appends count themselves here. */
  public TrafficCounters counters() {
    return counters;
  }

  /**
   * Commits every location of {@code shuffle}: the answer completes, on a flusher thread, once
   * every file is written and closed. Idempotent: later calls return the same future. A shuffle
   * with no location here commits nothing.
   */
  public CompletableFuture<ShuffleCommit> commit(ShuffleId shuffle) {
    return commit(shuffle, ShuffleState.NO_OWNER);
  }

  /**
   * As {@link #commit(ShuffleId)}, for the owner that reserved the shuffle.
   *
   * @throws FaroException NOT_OWNER when {@code ownerToken} is not the token the shuffle was
   *     reserved with: a stray or forged commit must never end a shuffle that is still written
   */
  public CompletableFuture<ShuffleCommit> commit(ShuffleId shuffle, long ownerToken) {
    return committer.commit(shuffle, shuffles.get(shuffle), ownerToken);
  }

  /** The disk that {@code key}'s file is on; call after {@link #committed} found the partition. */
  public Disk disk(PartitionKey key) {
    return committer.disk(key, shuffles.get(key.shuffle()));
  }

  /**
   * The committed file of {@code key}, for fetches.
   *
   * @throws FaroException UNKNOWN_PARTITION if this worker holds no such location,
   *     SHUFFLE_NOT_COMMITTED if its commit has not completed, STORAGE_FAILED if it failed
   */
  public PartitionCommit.Committed committed(PartitionKey key) {
    return committer.committed(key, shuffles.get(key.shuffle()));
  }

  /**
   * The files of {@code fetched}'s shuffle to read ahead now that a reducer fetched it ({@link
   * ReadAhead}): none before every location of the shuffle here has its commit outcome.
   */
  public List<ReadAhead.Target> readAhead(PartitionKey fetched, int maxFiles, long maxBytes) {
    ShuffleState state = shuffles.get(fetched.shuffle());
    ReadAhead plan = state == null ? null : state.readAhead(i -> disks.get(i).reader());
    return plan == null ? List.of() : plan.next(fetched, maxFiles, maxBytes);
  }

  /**
   * Forgets {@code shuffle} and deletes its files and directories on the flusher threads. The
   * future completes when everything is gone.
   */
  public CompletableFuture<Void> expire(ShuffleId shuffle) {
    return expiry.expire(shuffle, shuffles.remove(shuffle), reservations);
  }

  /** The shuffles with locations here. */
  public Set<ShuffleId> shuffles() {
    return Set.copyOf(shuffles.keySet());
  }

  /**
   * The bytes held of each shuffle with locations here: what its locations took, and what the
   * committed files of an earlier run hold (the masters' byte quotas add them up).
   */
  public Map<ShuffleId, Long> bytesByShuffle() {
    return StoreCensus.bytesByShuffle(shuffles.values());
  }

  /** Each shuffle with locations here, in no particular order. */
  public List<ShuffleSummary> summaries() {
    return StoreCensus.summaries(shuffles.values());
  }

  /**
   * Locations that still take data, per disk (index: the disk's), counted in one pass over every
   * location held.
   */
  public int[] openPartitionsByDisk() {
    return StoreCensus.openPartitionsByDisk(shuffles.values(), disks.size());
  }

  /** Locations whose file is not finished yet: open, or sealed or committed but still writing. */
  public int unfinishedLocations() {
    return StoreCensus.unfinishedLocations(shuffles.values());
  }

  /** Hands every partition's buffer to its flusher (memory relief). */
  public void flushBuffered() {
    shuffles.values().forEach(s -> s.writers.values().forEach(PartitionWriter::flushBuffered));
  }

  /** Releases every buffer (files stay: a restart may serve committed ones again). */
  @Override
  public void close() {
    shuffles.values().forEach(s -> s.writers.values().forEach(w -> w.discard()));
  }
}
