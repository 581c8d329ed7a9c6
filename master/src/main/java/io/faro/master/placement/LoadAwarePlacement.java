package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerId;
import io.faro.master.state.DiskSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
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
 * <p>Over 400 lines, knowingly: room, tier order, load groups, worker choice, water-filling and
 * rounding are the steps of one computation over the same per-call disk table (Slot); split apart,
 * each piece would need that table passed around and the steps would no longer read in order.
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

  /** One usable disk of a candidate, for the time of one call. */
  private static final class Slot {
    final int worker;
    final DiskSpec spec;
    final DiskLoad load;
    // Slots its space allows before this request; Long.MAX_VALUE when nothing bounds it.
    final long room;
    double score;
    int group;
    double weight;
    long taken;

    Slot(int worker, DiskSpec spec, DiskLoad load, long room) {
      this.worker = worker;
      this.spec = spec;
      this.load = load;
      this.room = room;
    }

    long roomLeft() {
      return room == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, room - taken);
    }
  }

  /**
   * A disk counts as slower than the first disk of its run (sorted by score), and starts a new
   * group, only when its score is more than this factor of that disk's and more than {@link
   * #SAME_SPEED_GAP_MS} above it; otherwise it shares that disk's group.
   */
  static final double SAME_SPEED = 2.0;

  /**
   * See {@link #SAME_SPEED}: milliseconds per MiB. Page-cache writes on a busy 2-core machine were
   * measured between 3 and 6 ms per MiB on identical directories, reads between 1 and 2.
   */
  static final double SAME_SPEED_GAP_MS = 2.0;

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
    List<List<Slot>> disks = slots(usable);
    int count = Candidates.workerCount(request, usable.size(), settings.maxWorkersPerShuffle());
    List<Integer> chosenIndex = choose(disks, count, request.partitions().size(), random);
    List<WorkerCandidate> chosen = chosenIndex.stream().map(usable::get).toList();
    List<List<Slot>> chosenDisks = chosenIndex.stream().map(disks::get).toList();

    int n = request.partitions().size();
    List<Slot> all = new ArrayList<>();
    chosenDisks.forEach(all::addAll);
    long[] primaries = distribute(n, all, random);
    List<SlotQueue> primaryQueues = queues(chosenDisks, all, primaries);

    List<SlotQueue> replicaQueues = null;
    int[] replicaOf = null;
    if (request.replicate()) {
      replicaOf = new int[chosen.size()];
      long[] replicasOn = new long[chosen.size()];
      for (int w = 0; w < chosen.size(); w++) {
        replicaOf[w] = Candidates.replicaOf(chosen, w);
        replicasOn[replicaOf[w]] += primaryQueues.get(w).size();
      }
      replicaQueues = new ArrayList<>(chosen.size());
      for (int r = 0; r < chosen.size(); r++) {
        List<Slot> own = chosenDisks.get(r);
        long[] counts = distribute(replicasOn[r], own, random);
        replicaQueues.add(queues(List.of(own), own, counts).get(0));
      }
    }

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
    List<List<Slot>> disks = slots(usable);
    for (List<Slot> own : disks) {
      for (Slot s : own) {
        ranked.add(
            new RankedDisk(
                usable.get(s.worker).id(), s.spec.index(), s.spec.tier(), s.score, s.group));
      }
    }
    return ranked;
  }

  /** Every usable disk of every candidate, by candidate, with its room, score, group and weight. */
  private List<List<Slot>> slots(List<WorkerCandidate> usable) {
    long size = Math.max(1, partitionBytes.getAsLong());
    List<List<Slot>> byWorker = new ArrayList<>(usable.size());
    List<Slot> all = new ArrayList<>();
    for (int w = 0; w < usable.size(); w++) {
      WorkerCandidate candidate = usable.get(w);
      List<Slot> own = new ArrayList<>();
      for (DiskSpec spec : candidate.usableDisks()) {
        DiskLoad load = candidate.latestLoads().get(spec.index());
        long room;
        if (load == null) {
          // Not reported yet: its declared size is all there is to go by.
          room = spec.capacityBytes() > 0 ? spec.capacityBytes() / size : Long.MAX_VALUE;
        } else {
          room = Math.max(0, load.fillableBytes() / size - load.activePartitions());
        }
        Slot slot = new Slot(w, spec, load, room);
        own.add(slot);
        all.add(slot);
      }
      byWorker.add(own);
    }
    weigh(all);
    return byWorker;
  }

  /** Scores each disk, sorts each tier's disks into groups, and gives each group its weight. */
  private void weigh(List<Slot> all) {
    for (DiskTier tier : DiskTier.values()) {
      List<Slot> inTier = new ArrayList<>();
      double flushSum = 0;
      double readSum = 0;
      int flushes = 0;
      int reads = 0;
      for (Slot s : all) {
        if (s.spec.tier() != tier) {
          continue;
        }
        inTier.add(s);
        if (s.load != null && s.load.flushMsPerMiB() > 0) {
          flushSum += s.load.flushMsPerMiB();
          flushes++;
        }
        if (s.load != null && s.load.readMsPerMiB() > 0) {
          readSum += s.load.readMsPerMiB();
          reads++;
        }
      }
      // A time a disk has not measured lately (it wrote or read too little) is taken for its
      // tier's mean: an idle side of a disk must score neither as free nor as the slowest.
      double flushMean = flushes == 0 ? 0 : flushSum / flushes;
      double readMean = reads == 0 ? 0 : readSum / reads;
      for (Slot s : inTier) {
        double flush =
            s.load != null && s.load.flushMsPerMiB() > 0 ? s.load.flushMsPerMiB() : flushMean;
        double read =
            s.load != null && s.load.readMsPerMiB() > 0 ? s.load.readMsPerMiB() : readMean;
        s.score = settings.flushWeight() * flush + settings.fetchWeight() * read;
      }
      inTier.sort(Comparator.comparingDouble(s -> s.score));
      int groups = settings.diskGroups();
      double runStart = 0;
      int runGroup = 0;
      for (int i = 0; i < inTier.size(); i++) {
        Slot s = inTier.get(i);
        // A disk not clearly slower than the first of the run before it shares its group: a
        // disk's time per MiB varies from one interval to the next on a busy machine, and noise
        // must not move slots.
        if (i == 0 || (s.score > runStart * SAME_SPEED && s.score - runStart > SAME_SPEED_GAP_MS)) {
          runStart = s.score;
          runGroup = (int) ((long) i * groups / inTier.size());
        }
        s.group = runGroup;
        s.weight = Math.pow(settings.gradient(), groups - 1 - s.group);
      }
    }
  }

  /**
   * {@code count} of the workers, ascending: all when there are no more. Otherwise those whose
   * fastest tier with room is the fastest first (so that a cap does not pass over the NVMe workers
   * while they have room), and within a tier at random, a worker the more likely the more room it
   * has there, up to what the request needs (weighted sampling without replacement: the largest
   * {@code log(u) / weight} win); workers without room last.
   */
  private static List<Integer> choose(List<List<Slot>> disks, int count, long need, Random random) {
    List<Integer> all = new ArrayList<>(disks.size());
    for (int w = 0; w < disks.size(); w++) {
      all.add(w);
    }
    if (count >= disks.size()) {
      return all;
    }
    int[] tier = new int[disks.size()];
    double[] key = new double[disks.size()];
    for (int w = 0; w < disks.size(); w++) {
      int best = DiskTier.values().length;
      long room = 0;
      for (Slot s : disks.get(w)) {
        long left = s.roomLeft();
        if (left <= 0) {
          continue;
        }
        int t = s.spec.tier().ordinal();
        if (t < best) {
          best = t;
          room = 0;
        }
        if (t == best) {
          room = saturatedAdd(room, left);
        }
      }
      tier[w] = best;
      double weight = Math.max(1, Math.min(room, Math.max(1, need)));
      key[w] = Math.log(1 - random.nextDouble()) / weight;
    }
    all.sort(Comparator.<Integer>comparingInt(w -> tier[w]).thenComparing(w -> -key[w]));
    List<Integer> chosen = new ArrayList<>(all.subList(0, count));
    Collections.sort(chosen);
    return chosen;
  }

  /**
   * Gives {@code n} slots to {@code slots}, tier by tier (fastest first) within each disk's room,
   * by weight; what no disk has room for goes to all of them by weight. Counts the slots given into
   * each disk's {@code taken}, and returns them, index for index.
   */
  private static long[] distribute(long n, List<Slot> slots, Random random) {
    long[] counts = new long[slots.size()];
    long left = n;
    for (DiskTier tier : DiskTier.values()) {
      if (left == 0) {
        break;
      }
      List<Integer> inTier = new ArrayList<>();
      long room = 0;
      for (int i = 0; i < slots.size(); i++) {
        Slot s = slots.get(i);
        if (s.spec.tier() == tier && s.roomLeft() > 0) {
          inTier.add(i);
          room = saturatedAdd(room, s.roomLeft());
        }
      }
      long k = Math.min(left, room);
      if (k > 0) {
        fill(k, slots, inTier, counts, true, random);
        left -= k;
      }
    }
    if (left > 0) {
      List<Integer> every = new ArrayList<>(slots.size());
      for (int i = 0; i < slots.size(); i++) {
        every.add(i);
      }
      fill(left, slots, every, counts, false, random);
    }
    for (int i = 0; i < slots.size(); i++) {
      slots.get(i).taken += counts[i];
    }
    return counts;
  }

  /**
   * Adds {@code k} slots to {@code counts} over the disks {@code indices} of {@code slots}, in
   * proportion to their weights; with {@code capped}, none beyond its room (the caller made sure
   * they have {@code k} in all). The shares are water-filled (a disk whose share would pass its
   * room gets its room, the others share the rest) and then rounded systematically.
   */
  private static void fill(
      long k,
      List<Slot> slots,
      List<Integer> indices,
      long[] counts,
      boolean capped,
      Random random) {
    int m = indices.size();
    double[] share = new double[m];
    double[] cap = new double[m];
    double weights = 0;
    for (int j = 0; j < m; j++) {
      Slot s = slots.get(indices.get(j));
      long room = s.roomLeft();
      cap[j] = !capped || room == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : room;
      weights += s.weight;
    }
    // Water level: each disk gets min(cap, level * weight), the level chosen so that they sum to
    // k. Disks are capped in order of cap / weight, lowest first.
    Integer[] order = new Integer[m];
    for (int j = 0; j < m; j++) {
      order[j] = j;
    }
    Arrays.sort(order, Comparator.comparingDouble(j -> cap[j] / slots.get(indices.get(j)).weight));
    double toGive = k;
    double weightLeft = weights;
    int firstUncapped = 0;
    while (firstUncapped < m) {
      int j = order[firstUncapped];
      double weight = slots.get(indices.get(j)).weight;
      if (cap[j] * weightLeft > toGive * weight) {
        break;
      }
      share[j] = cap[j];
      toGive -= cap[j];
      weightLeft -= weight;
      firstUncapped++;
    }
    for (int o = firstUncapped; o < m; o++) {
      int j = order[o];
      share[j] = weightLeft <= 0 ? 0 : toGive * slots.get(indices.get(j)).weight / weightLeft;
    }
    // Whole slots first, then the fractions by systematic sampling: disk j gets one more with
    // probability equal to its fraction, and exactly the missing number is handed out.
    long given = 0;
    double[] fraction = new double[m];
    for (int j = 0; j < m; j++) {
      long whole = (long) Math.min(Math.floor(share[j]), cap[j]);
      counts[indices.get(j)] += whole;
      given += whole;
      fraction[j] = whole >= cap[j] ? 0 : share[j] - whole;
    }
    long missing = k - given;
    double point = random.nextDouble();
    double cumulative = 0;
    for (int j = 0; j < m && missing > 0; j++) {
      cumulative += fraction[j];
      if (cumulative > point) {
        counts[indices.get(j)]++;
        missing--;
        point += 1;
      }
    }
    // Rounding error can leave a slot or two: the disks with the most room per weight take them.
    while (missing > 0) {
      long before = missing;
      for (int o = m - 1; o >= 0 && missing > 0; o--) {
        int i = indices.get(order[o]);
        long room = slots.get(i).roomLeft();
        if (!capped || room == Long.MAX_VALUE || counts[i] < room) {
          counts[i]++;
          missing--;
        }
      }
      if (missing == before) {
        throw new IllegalStateException(k + " slots asked of disks without room for them");
      }
    }
  }

  /**
   * Each chosen worker's slots as a queue that takes its disks in turn (disk A three times and B
   * twice give A B A B A), so that a worker's consecutive partitions land on different disks.
   */
  private static List<SlotQueue> queues(List<List<Slot>> byWorker, List<Slot> all, long[] counts) {
    List<SlotQueue> queues = new ArrayList<>(byWorker.size());
    int offset = 0;
    for (List<Slot> own : byWorker) {
      long[] left = new long[own.size()];
      long total = 0;
      for (int d = 0; d < own.size(); d++) {
        left[d] = counts[offset + d];
        total += left[d];
      }
      int[] order = new int[(int) total];
      int filled = 0;
      while (filled < total) {
        for (int d = 0; d < own.size(); d++) {
          if (left[d] > 0) {
            left[d]--;
            order[filled++] = own.get(d).spec.index();
          }
        }
      }
      queues.add(new SlotQueue(order));
      offset += own.size();
    }
    if (offset != all.size()) {
      throw new IllegalStateException("slots and counts differ: " + offset + " / " + all.size());
    }
    return queues;
  }

  /** Disk indices one worker was given, taken in order. */
  private static final class SlotQueue {
    private final int[] disks;
    private int next;

    SlotQueue(int[] disks) {
      this.disks = disks;
    }

    boolean isEmpty() {
      return next == disks.length;
    }

    int size() {
      return disks.length;
    }

    int next() {
      return disks[next++];
    }
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}
