package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.HostPort;
import io.faro.worker.replicate.ReplicaLink;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.Layout;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reservation: which locations a shuffle gets on this worker and on which disk, held idle until
 * their first part makes their writer ({@link IdleLocations}). A reservation is checked whole
 * before anything is added (disk indexes, the request's size, the worker's bound on locations held,
 * the shuffle's owner and app registration, a commit already started), so that a refusal adds
 * nothing; a disk that takes no data hands its locations to another of the same tier, then slower,
 * then faster ones. While the worker leaves (a graceful stop, a drain) every reservation is
 * refused, retryably, with the reason.
 *
 * <p>Thread-safety: a reservation runs under its shuffle's lock ({@link ShuffleState}); the count
 * of locations held and the refusal are read anywhere.
 */
final class Reservations {
  private static final Logger LOG = LoggerFactory.getLogger(Reservations.class);

  private final Disks disks;
  private final WriterSettings settings;
  private final Function<HostPort, ReplicaLink> replicaLinks;
  private final ReservationLimits limits;

  /** Partition locations held, all shuffles; changed under the shuffle's lock, read anywhere. */
  private final AtomicInteger held = new AtomicInteger();

  /** Of those, the ones that received a part (a writer each). */
  private final AtomicInteger written = new AtomicInteger();

  /** When a first part was last refused for faro.worker.max.written.partitions (a warning). */
  private volatile long lastWrittenRefusalMillis;

  /** Why reservations are refused (a graceful stop, a drain); null while they are taken. */
  private volatile String refusing;

  Reservations(
      Disks disks,
      WriterSettings settings,
      Function<HostPort, ReplicaLink> replicaLinks,
      ReservationLimits limits) {
    this.disks = requireNonNull(disks, "disks is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.replicaLinks = requireNonNull(replicaLinks, "replicaLinks is null");
    this.limits = requireNonNull(limits, "limits is null");
  }

  void refuse(String why) {
    refusing = requireNonNull(why, "why is null");
  }

  void take() {
    refusing = null;
  }

  /** Partition locations held now, of every shuffle. */
  int held() {
    return held.get();
  }

  /** Locations that received a part, of every shuffle. */
  int written() {
    return written.get();
  }

  /**
   * Whether this worker holds faro.worker.max.written.partitions locations that received a part: a
   * first part is then refused.
   */
  boolean writtenFull() {
    return written.get() >= limits.maxWrittenPartitions();
  }

  /**
   * The locations of an expired shuffle are gone: {@code writers} that received a part and {@code
   * idle} ones.
   */
  void released(int writers, int idle) {
    held.addAndGet(-(writers + idle));
    written.addAndGet(-writers);
  }

  /** Refuses a reservation request larger than faro.worker.reserve.max.locations. */
  void checkSize(ShuffleId shuffle, int locations) {
    if (locations > limits.maxLocationsPerReserve()) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "a reservation for shuffle "
              + shuffle
              + " asks for "
              + locations
              + " locations; at most "
              + limits.maxLocationsPerReserve()
              + " per request (faro.worker.reserve.max.locations)");
    }
  }

  /** See {@link PartitionStore#reserve(ShuffleId, long, String, List)}. */
  void reserve(
      Map<ShuffleId, ShuffleState> shuffles,
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      List<Reservation> reservations) {
    checkSize(shuffle, reservations.size());
    reservations.forEach(r -> checkWellFormed(shuffle, r));
    refuseIfLeaving(shuffle, reservations.size()); // before a state is made for a new shuffle
    while (true) {
      ShuffleState state = shuffles.computeIfAbsent(shuffle, ShuffleState::new);
      synchronized (state) {
        if (state.expired) {
          continue; // expired meanwhile: the next computeIfAbsent makes a fresh state
        }
        // Checked again under the shuffle's lock: sealAll takes it after the refusal, so every
        // location added before it is sealed, and none is added after. A state this call made for
        // nothing goes again (a drain waits for the shuffles held to go).
        String why = refusing;
        if (why != null) {
          if (state.locations() == 0
              && state.restored.isEmpty()
              && state.restoredEmpty.isEmpty()
              && state.commit == null) {
            state.expired = true;
            shuffles.remove(shuffle, state);
          }
          throw refusal(shuffle, reservations.size(), why);
        }
        checkHolder(state, shuffle, ownerToken, appNonce);
        // Every check (and choice of disk) first, so that a refusal adds nothing.
        Map<PartitionKey, Disk> added = newLocations(state, shuffle, reservations);
        // Claimed before any writer is visible: a push that finds one of these writers then reads
        // this nonce (see PartitionStore#writer(PartitionKey, String)).
        state.claimOwner(ownerToken);
        if (!appNonce.isEmpty()) {
          state.claimAppNonce(appNonce);
        }
        state.idle.ensureRoom(added.size());
        for (Reservation r : reservations) {
          Disk disk = added.remove(new PartitionKey(shuffle, r.partition(), r.epoch()));
          if (disk != null) {
            addIdle(state, new PartitionKey(shuffle, r.partition(), r.epoch()), disk, r);
          }
        }
        return;
      }
    }
  }

  private void checkWellFormed(ShuffleId shuffle, Reservation r) {
    if (r.diskIndex() < 0 || r.diskIndex() >= disks.size()) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "partition "
              + r.partition()
              + " epoch "
              + r.epoch()
              + " of shuffle "
              + shuffle
              + " asks for disk "
              + r.diskIndex()
              + " but this worker has "
              + disks.size()
              + " (faro.worker.dirs)");
    }
    if (r.partition() < 0 || r.epoch() < 0) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "bad partition " + r.partition() + " epoch " + r.epoch() + " in shuffle " + shuffle);
    }
  }

  /** The shuffle's owner token and app registration, where it has them, must be the caller's. */
  // @GuardedBy("state")
  private static void checkHolder(
      ShuffleState state, ShuffleId shuffle, long ownerToken, String appNonce) {
    state.checkOwner(ownerToken, "reserve");
    if (!appNonce.isEmpty() && !state.appNonce().isEmpty() && !state.appNonce().equals(appNonce)) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "shuffle " + shuffle + " was reserved by another registration of its app");
    }
  }

  /**
   * The locations of {@code reservations} the shuffle does not hold yet, each with the disk it goes
   * on, in request order; refuses them all if the shuffle's commit started or they would take the
   * worker past faro.worker.max.partitions, or no disk takes data.
   */
  // @GuardedBy("state")
  private Map<PartitionKey, Disk> newLocations(
      ShuffleState state, ShuffleId shuffle, List<Reservation> reservations) {
    Map<PartitionKey, Reservation> fresh = new LinkedHashMap<>();
    for (Reservation r : reservations) {
      PartitionKey key = new PartitionKey(shuffle, r.partition(), r.epoch());
      if (state.writers.containsKey(key)
          || state.idle.contains(r.partition(), r.epoch())
          || state.restored.containsKey(key)
          || state.restoredEmpty.contains(r.partition(), r.epoch())
          || fresh.containsKey(key)) {
        continue;
      }
      if (state.commitStarted) {
        throw new FaroException(
            ErrorCode.INVALID_REQUEST,
            "cannot reserve " + key + ": shuffle " + shuffle + " is already committed");
      }
      fresh.put(key, r);
    }
    if (held.get() + fresh.size() > limits.maxPartitions()) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "cannot reserve "
              + fresh.size()
              + " locations of shuffle "
              + shuffle
              + ": this worker holds "
              + held.get()
              + " of at most "
              + limits.maxPartitions()
              + " (faro.worker.max.partitions)");
    }
    Map<PartitionKey, Disk> chosen = new LinkedHashMap<>();
    fresh.forEach((key, r) -> chosen.put(key, accepting(key, disks.get(r.diskIndex()))));
    return chosen;
  }

  /**
   * Holds a new location as idle: its writer is made when its first part arrives ({@link
   * #firstPart}). A shuffle whose replica links do not fit an idle entry gets its writer now.
   */
  // @GuardedBy("state")
  private void addIdle(ShuffleState state, PartitionKey key, Disk disk, Reservation r) {
    ReplicaLink link = r.replica().map(replicaLinks).orElse(null);
    int linkIndex = link == null ? IdleLocations.Idle.NO_LINK : state.linkIndex(link);
    if (link != null && linkIndex < 0) {
      addWriter(state, key, disk, link, r.replicaCopy());
      written.incrementAndGet();
    } else {
      state.idle.add(key.partition(), key.epoch(), disk.index(), linkIndex, r.replicaCopy());
    }
    held.incrementAndGet();
  }

  /**
   * The writer of {@code key} for a part that arrived: the one it has, or one made now from its
   * idle entry; null when the shuffle holds no such location, or no longer takes data there (its
   * commit started, it expired, or it was sealed), or this worker holds
   * faro.worker.max.written.partitions written locations already: the idle location then stays
   * idle, and its part is answered WORKER_FULL (the client moves the partition to another worker).
   */
  PartitionWriter firstPart(ShuffleState state, PartitionKey key) {
    synchronized (state) {
      PartitionWriter writer = state.writers.get(key);
      if (writer != null || state.expired || state.commitStarted) {
        return writer;
      }
      IdleLocations.Idle idle = state.idle.get(key.partition(), key.epoch());
      if (idle == null || idle.sealed()) {
        return null;
      }
      // Counted over every shuffle, whose first parts run under their own locks.
      int now;
      do {
        now = written.get();
        if (now >= limits.maxWrittenPartitions()) {
          warnWrittenFull(key);
          return null;
        }
      } while (!written.compareAndSet(now, now + 1));
      state.idle.take(key.partition(), key.epoch());
      ReplicaLink link =
          idle.linkIndex() == IdleLocations.Idle.NO_LINK ? null : state.link(idle.linkIndex());
      return addWriter(state, key, disks.get(idle.diskIndex()), link, idle.replicaCopy());
    }
  }

  private void warnWrittenFull(PartitionKey key) {
    long now = System.currentTimeMillis();
    if (now - lastWrittenRefusalMillis >= 10_000) {
      lastWrittenRefusalMillis = now;
      LOG.warn(
          "The first part of {} is moved to another worker: this worker holds {} written"
              + " locations, at most {} (faro.worker.max.written.partitions); logged at most every"
              + " 10 s",
          key,
          written.get(),
          limits.maxWrittenPartitions());
    }
  }

  // @GuardedBy("state")
  private PartitionWriter addWriter(
      ShuffleState state, PartitionKey key, Disk disk, ReplicaLink link, boolean replicaCopy) {
    if (replicaCopy) {
      state.replicaCopies.add(key);
    }
    ShuffleRuns runs =
        disk.layout() == Layout.RUNS ? state.runs(disk, replicaCopy, settings) : null;
    PartitionWriter writer = new PartitionWriter(key, disk, settings, link, runs);
    state.writers.put(key, writer);
    return writer;
  }

  /** Refuses a reservation while the worker leaves (a graceful stop, a drain). */
  private void refuseIfLeaving(ShuffleId shuffle, int locations) {
    String why = refusing;
    if (why != null) {
      throw refusal(shuffle, locations, why);
    }
  }

  private static FaroException refusal(ShuffleId shuffle, int locations, String why) {
    return new FaroException(
        ErrorCode.SHUTTING_DOWN,
        "cannot reserve "
            + locations
            + " locations of shuffle "
            + shuffle
            + ": this worker "
            + why);
  }

  /**
   * {@code asked} if it takes data; otherwise a healthy disk of the same tier if there is one, else
   * of the next slower tier that has one (a full NVMe disk's partitions go on to SSD, then HDD),
   * else of a faster tier; spread by partition (the master placed before it heard of the disk's
   * state).
   *
   * @throws FaroException STORAGE_FAILED when no disk of this worker is healthy: the lifecycle
   *     manager then places the partition on another worker
   */
  private Disk accepting(PartitionKey key, Disk asked) {
    if (asked.accepting()) {
      return asked;
    }
    List<Disk> healthy = disks.all().stream().filter(Disk::accepting).toList();
    List<Disk> candidates = List.of();
    DiskTier[] tiers = DiskTier.values();
    // The asked tier, then the slower ones, then the faster ones nearest first.
    for (int step = 0; step < tiers.length && candidates.isEmpty(); step++) {
      int t =
          asked.tier().ordinal() + step < tiers.length
              ? asked.tier().ordinal() + step
              : tiers.length - 1 - step;
      DiskTier tier = tiers[t];
      candidates = healthy.stream().filter(d -> d.tier() == tier).toList();
    }
    if (candidates.isEmpty()) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED,
          "cannot reserve "
              + key
              + ": no disk of this worker"
              + " takes data (disk "
              + asked.index()
              + " is "
              + asked.health().describe()
              + ")");
    }
    return candidates.get(Math.floorMod(key.partition() + key.epoch(), candidates.size()));
  }
}
