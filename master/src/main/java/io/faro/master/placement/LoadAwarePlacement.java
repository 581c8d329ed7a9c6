package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerId;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/**
 * Places partitions by what the workers' heartbeats say of their disks (seed 000: one loaded disk,
 * one loaded node is what hurts; seed 002: shuffle on NVMe first, HDD behind it):
 *
 * <ol>
 *   <li><b>Room.</b> A disk takes at most its usable bytes divided by the estimated partition size
 *       (learned from committed files, see {@link PartitionSizeEstimate}), less the partitions it
 *       holds open. A disk its worker has not reported yet counts by its declared capacity.
 *   <li><b>Tier first.</b> Partitions go to the fastest tier with room (NVMe, then SSD, then HDD);
 *       only what the tier has no room for goes to the next. When no disk has room by the estimate,
 *       the rest is spread over every usable disk anyway: the estimate is a guess, and a disk that
 *       really fills makes its partitions split elsewhere.
 *   <li><b>Load.</b> Within a tier each disk is scored {@code flushWeight * flushTime + fetchWeight
 *       * readTime} (milliseconds per MiB, recent averages; a disk without measurements scores its
 *       tier's mean), the disks are sorted by score into {@code diskGroups} groups of equal size
 *       (disks with equal scores share a group), and a disk of each faster group gets {@code
 *       gradient} times the slots of one in the next. A disk whose latency collapses gets fewer
 *       slots without anyone touching config, and never none.
 *   <li><b>Workers.</b> One request spreads over at most {@code maxWorkersPerShuffle} workers,
 *       chosen at random among those with room (then the others). Consecutive partitions go to
 *       different workers; replicas go to the next chosen worker on another host, as with {@link
 *       RoundRobinPlacement}, on that worker's disks by the same rules.
 * </ol>
 *
 * <p>Shares are made exact by systematic rounding with a random start: a disk whose share is 2.4
 * slots gets 2 or 3, and over many requests 2.4 on average, so that small requests do not all land
 * on the same disks. Thread-safe (state lives in each call); the choice need not be deterministic,
 * since the locations go into the Raft log.
 *
 * <p>This class runs the steps in order over one table per call, a {@link DiskSlot} for each usable
 * disk (which also works out its room), and makes the locations; the load model is {@link
 * DiskScores}, the choice of workers {@link WorkerChoice}, tier order, water-filling and rounding
 * {@link SlotShares}, and the order of a worker's disks {@link SlotQueue}.
 */
public final class LoadAwarePlacement implements SlotPlacement {
  /**
   * @param maxWorkersPerShuffle faro.master.slots.max.workers.per.shuffle
   * @param flushWeight faro.master.slots.flush.weight
   * @param fetchWeight faro.master.slots.fetch.weight
   * @param diskGroups faro.master.slots.disk.groups
   * @param gradient faro.master.slots.group.gradient
   */
  public record Settings(
      int maxWorkersPerShuffle,
      double flushWeight,
      double fetchWeight,
      int diskGroups,
      double gradient) {
    public Settings {
      if (maxWorkersPerShuffle <= 0
          || !(flushWeight >= 0)
          || !(fetchWeight >= 0)
          || Double.isInfinite(flushWeight)
          || Double.isInfinite(fetchWeight)
          || diskGroups <= 0
          || !(gradient >= 1)
          || Double.isInfinite(gradient)) {
        throw new IllegalArgumentException(
            "bad load-aware placement settings: max workers "
                + maxWorkersPerShuffle
                + ", weights "
                + flushWeight
                + "/"
                + fetchWeight
                + ", groups "
                + diskGroups
                + ", gradient "
                + gradient);
      }
    }
  }

  /**
   * A usable disk as placement ranks it: its tier, load score (ms per MiB, weighted) and group (0
   * is the fastest of its tier).
   */
  public record RankedDisk(WorkerId worker, int disk, DiskTier tier, double score, int group) {}

  private final Settings settings;
  private final LongSupplier partitionBytes;

  /**
   * @param partitionBytes the estimated size of one partition location, in bytes
   */
  public LoadAwarePlacement(Settings settings, LongSupplier partitionBytes) {
    this.settings = requireNonNull(settings, "settings is null");
    this.partitionBytes = requireNonNull(partitionBytes, "partitionBytes is null");
  }

  @Override
  public List<PartitionLocation> place(PlacementRequest request, List<WorkerCandidate> candidates) {
    List<WorkerCandidate> usable = Candidates.usable(request, candidates);
    Random random = ThreadLocalRandom.current();
    List<List<DiskSlot>> disks = slots(usable);
    int count = Candidates.workerCount(request, usable.size(), settings.maxWorkersPerShuffle());
    List<Integer> chosenIndex =
        WorkerChoice.choose(disks, count, request.partitions().size(), random);
    List<WorkerCandidate> chosen = chosenIndex.stream().map(usable::get).toList();
    List<List<DiskSlot>> chosenDisks = chosenIndex.stream().map(disks::get).toList();

    int n = request.partitions().size();
    List<DiskSlot> all = new ArrayList<>();
    chosenDisks.forEach(all::addAll);
    long[] primaries = SlotShares.distribute(n, all, random);
    List<SlotQueue> primaryQueues = SlotQueue.of(chosenDisks, all, primaries);

    List<SlotQueue> replicaQueues = null;
    int[] replicaOf = null;
    if (request.replicate()) {
      replicaOf = new int[chosen.size()];
      for (int w = 0; w < chosen.size(); w++) {
        replicaOf[w] = Candidates.replicaOf(chosen, w);
      }
      replicaQueues = replicaQueues(chosenDisks, primaryQueues, replicaOf, random);
    }
    return locations(request, chosen, primaryQueues, replicaOf, replicaQueues, random);
  }

  /**
   * Each chosen worker's replica slots: as many as the primaries of the workers whose replicas it
   * holds, on its own disks by the same rules as primaries.
   */
  private static List<SlotQueue> replicaQueues(
      List<List<DiskSlot>> chosenDisks,
      List<SlotQueue> primaryQueues,
      int[] replicaOf,
      Random random) {
    long[] replicasOn = new long[replicaOf.length];
    for (int w = 0; w < replicaOf.length; w++) {
      replicasOn[replicaOf[w]] += primaryQueues.get(w).size();
    }
    List<SlotQueue> replicaQueues = new ArrayList<>(replicaOf.length);
    for (int r = 0; r < replicaOf.length; r++) {
      List<DiskSlot> own = chosenDisks.get(r);
      long[] counts = SlotShares.distribute(replicasOn[r], own, random);
      replicaQueues.add(SlotQueue.of(List.of(own), own, counts).get(0));
    }
    return replicaQueues;
  }

  /**
   * The request's locations: each partition to the next chosen worker with a slot left, starting
   * from a random one, with its replica on that worker's replica worker when {@code replicaQueues}
   * is not null.
   */
  private static List<PartitionLocation> locations(
      PlacementRequest request,
      List<WorkerCandidate> chosen,
      List<SlotQueue> primaryQueues,
      int[] replicaOf,
      List<SlotQueue> replicaQueues,
      Random random) {
    int n = request.partitions().size();
    List<PartitionLocation> locations = new ArrayList<>(n);
    int w = random.nextInt(chosen.size());
    for (int i = 0; i < n; i++) {
      while (primaryQueues.get(w).isEmpty()) {
        w = (w + 1) % chosen.size();
      }
      WorkerCandidate worker = chosen.get(w);
      PartitionLocation primary =
          Candidates.location(request, i, Role.PRIMARY, worker, primaryQueues.get(w).next());
      if (replicaQueues != null) {
        int r = replicaOf[w];
        primary =
            primary.withReplica(
                Candidates.location(
                    request, i, Role.REPLICA, chosen.get(r), replicaQueues.get(r).next()));
      }
      locations.add(primary);
      w = (w + 1) % chosen.size();
    }
    return locations;
  }

  /** How placement ranks the usable disks of {@code candidates} now (for tools and tests). */
  public List<RankedDisk> rank(List<WorkerCandidate> candidates) {
    List<WorkerCandidate> usable =
        candidates.stream().filter(c -> !c.usableDisks().isEmpty()).toList();
    List<RankedDisk> ranked = new ArrayList<>();
    List<List<DiskSlot>> disks = slots(usable);
    for (List<DiskSlot> own : disks) {
      for (DiskSlot s : own) {
        ranked.add(
            new RankedDisk(
                usable.get(s.worker).id(), s.spec.index(), s.spec.tier(), s.score, s.group));
      }
    }
    return ranked;
  }

  /** Every usable disk of every candidate, by candidate, with its room, score, group and weight. */
  private List<List<DiskSlot>> slots(List<WorkerCandidate> usable) {
    List<List<DiskSlot>> byWorker = DiskSlot.of(usable, partitionBytes.getAsLong());
    List<DiskSlot> all = new ArrayList<>();
    byWorker.forEach(all::addAll);
    DiskScores.weigh(all, settings);
    return byWorker;
  }
}
