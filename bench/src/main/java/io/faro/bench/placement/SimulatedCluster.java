package io.faro.bench.placement;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.placement.DiskLoad;
import io.faro.master.placement.DiskStatus;
import io.faro.master.placement.WorkerCandidate;
import io.faro.master.state.DiskSpec;
import io.faro.master.state.RegisteredWorker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * Workers and their disks as a leader sees them, held in memory: what each registered (its disks'
 * tiers and sizes) and what its latest heartbeat said of each disk (usable bytes, health, open
 * partitions, recent milliseconds per MiB written and read). Built at random from a {@link Shape}
 * and a seed, so that two runs with the same seed place on the same cluster.
 *
 * <p>Disk speeds: each tier has a typical time per MiB ({@link #typicalMsPerMiB}); a disk takes it
 * times a factor drawn log-uniformly within the shape's spread (disks of one model differ, and so
 * does the load on them), and a slow disk ten times that. A full disk reports no usable bytes, a
 * broken one nothing at all; both say so in their status, as workers do.
 *
 * <p>Placement's own choices are not replayed: the partitions a request got count as open on their
 * disks for the requests after it ({@link #open}), as the workers' next heartbeats would report
 * them. Not thread-safe.
 */
final class SimulatedCluster {
  /** How much slower a slow disk is than the others of its tier. */
  static final double SLOW_FACTOR = 10;

  /** What a disk is, for the report. */
  enum Kind {
    NORMAL,
    SLOW,
    FULL,
    BROKEN
  }

  /**
   * {@code count} disks of {@code tier} on every worker, each with {@code bytes} usable.
   *
   * @param bytes usable bytes of each disk
   */
  record TierDisks(DiskTier tier, int count, long bytes) {
    TierDisks {
      requireNonNull(tier, "tier is null");
      if (count <= 0 || bytes <= 0) {
        throw new IllegalArgumentException(
            "bad disks of tier " + tier + ": " + count + " of " + bytes + " bytes");
      }
    }
  }

  /**
   * The cluster to build.
   *
   * @param tiers each worker's disks, in disk index order
   * @param fullFraction share of all disks that are full
   * @param brokenFraction share of all disks that are broken
   * @param slowFraction share of all disks that are {@link #SLOW_FACTOR} times slower than their
   *     tier's others
   * @param spread the fastest and the slowest disk of a tier that are not slow differ by this
   *     factor at most (1: all alike)
   */
  record Shape(
      int workers,
      List<TierDisks> tiers,
      double fullFraction,
      double brokenFraction,
      double slowFraction,
      double spread,
      long seed) {
    Shape {
      tiers = List.copyOf(tiers);
      if (workers <= 0 || tiers.isEmpty()) {
        throw new IllegalArgumentException("a cluster needs workers and disks");
      }
      if (!(spread >= 1) || Double.isInfinite(spread)) {
        throw new IllegalArgumentException("spread must be at least 1, not " + spread);
      }
      for (double f : new double[] {fullFraction, brokenFraction, slowFraction}) {
        if (!(f >= 0 && f <= 1)) {
          throw new IllegalArgumentException("fractions must be between 0 and 1, not " + f);
        }
      }
      if (fullFraction + brokenFraction + slowFraction > 1) {
        throw new IllegalArgumentException(
            "full, broken and slow disks are more than all disks: "
                + fullFraction
                + " + "
                + brokenFraction
                + " + "
                + slowFraction);
      }
    }

    int disksPerWorker() {
      return tiers.stream().mapToInt(TierDisks::count).sum();
    }
  }

  private final Shape shape;
  private final List<RegisteredWorker> workers;
  private final Map<WorkerId, Integer> indexes = new HashMap<>();
  private final DiskTier[] tiers;
  private final long[] usableBytes;
  private final Kind[][] kinds;
  private final DiskLoad[][] loads;
  private final Map<WorkerId, Map<Integer, DiskLoad>> latest = new HashMap<>();

  private SimulatedCluster(Shape shape) {
    this.shape = shape;
    int disks = shape.disksPerWorker();
    tiers = new DiskTier[disks];
    usableBytes = new long[disks];
    int d = 0;
    for (TierDisks t : shape.tiers()) {
      for (int i = 0; i < t.count(); i++, d++) {
        tiers[d] = t.tier();
        usableBytes[d] = t.bytes();
      }
    }
    kinds = new Kind[shape.workers()][disks];
    loads = new DiskLoad[shape.workers()][disks];
    workers = new ArrayList<>(shape.workers());
  }

  /** Builds the cluster {@code shape} describes. */
  static SimulatedCluster build(Shape shape) {
    SimulatedCluster cluster = new SimulatedCluster(shape);
    cluster.populate(new SplittableRandom(shape.seed()));
    return cluster;
  }

  private void populate(SplittableRandom random) {
    int disks = tiers.length;
    int total = shape.workers() * disks;
    // Exactly the asked share of each kind, on disks chosen at random among all.
    List<Integer> order = new ArrayList<>(total);
    for (int i = 0; i < total; i++) {
      order.add(i);
    }
    Collections.shuffle(order, new Random(random.nextLong()));
    int full = (int) Math.round(shape.fullFraction() * total);
    int broken = (int) Math.round(shape.brokenFraction() * total);
    int slow = Math.min(total - full - broken, (int) Math.round(shape.slowFraction() * total));
    for (Kind[] row : kinds) {
      Arrays.fill(row, Kind.NORMAL);
    }
    for (int i = 0; i < full + broken + slow; i++) {
      int disk = order.get(i);
      kinds[disk / disks][disk % disks] =
          i < full ? Kind.FULL : i < full + broken ? Kind.BROKEN : Kind.SLOW;
    }
    for (int w = 0; w < shape.workers(); w++) {
      String host = String.format(Locale.ROOT, "worker-%05d", w);
      WorkerId id = new WorkerId(host + ":9101");
      List<DiskSpec> specs = new ArrayList<>(disks);
      for (int d = 0; d < disks; d++) {
        specs.add(new DiskSpec(d, "/data" + d + "/faro", tiers[d], usableBytes[d]));
        double ms =
            typicalMsPerMiB(tiers[d])
                * Math.pow(shape.spread(), random.nextDouble() - 0.5)
                * (kinds[w][d] == Kind.SLOW ? SLOW_FACTOR : 1);
        loads[w][d] =
            switch (kinds[w][d]) {
              case FULL -> new DiskLoad(d, 0, DiskStatus.FULL, 0, ms, ms, 0);
              case BROKEN -> new DiskLoad(d, 0, DiskStatus.BROKEN, 0, 0, 0, 0);
              case NORMAL, SLOW ->
                  new DiskLoad(d, usableBytes[d], DiskStatus.HEALTHY, 0, ms, ms, 0);
            };
      }
      workers.add(
          new RegisteredWorker(id, new WorkerEndpoint(host, 9101, 9102, 9103), specs, 0, true));
      indexes.put(id, w);
      publish(w);
    }
  }

  /**
   * A disk's typical time per MiB written or read when busy with shuffle traffic: about 2 GB/s for
   * NVMe, 500 MB/s for SSD, 100 MB/s for HDD.
   */
  static double typicalMsPerMiB(DiskTier tier) {
    return switch (tier) {
      case NVME -> 0.5;
      case SSD -> 2;
      case HDD -> 10;
    };
  }

  /** Makes worker {@code w}'s loads what its next heartbeat reports. */
  private void publish(int w) {
    Map<Integer, DiskLoad> map = new HashMap<>();
    for (DiskLoad load : loads[w]) {
      map.put(load.index(), load);
    }
    // Immutable, as the leader keeps them: candidates then share it instead of copying.
    latest.put(workers.get(w).id(), Map.copyOf(map));
  }

  /** Every worker, alive and admitted, ordered by id. */
  List<RegisteredWorker> workers() {
    return workers;
  }

  /** Worker {@code id}'s disk loads by disk index, as of its latest heartbeat. */
  Map<Integer, DiskLoad> loads(WorkerId id) {
    return latest.getOrDefault(id, Map.of());
  }

  /** Every worker as a placement candidate now. */
  List<WorkerCandidate> candidates() {
    return workers.stream()
        .map(w -> new WorkerCandidate(w.id(), w.endpoint(), w.disks(), loads(w.id())))
        .toList();
  }

  /** Counts {@code locations} (primaries) as partitions open on their disks from now on. */
  void open(List<PartitionLocation> locations) {
    boolean[] touched = new boolean[workers.size()];
    for (PartitionLocation at : locations) {
      int w = index(at.worker());
      DiskLoad old = loads[w][at.diskIndex()];
      loads[w][at.diskIndex()] = old.withMorePartitions(1);
      touched[w] = true;
    }
    for (int w = 0; w < touched.length; w++) {
      if (touched[w]) {
        publish(w);
      }
    }
  }

  int index(WorkerId id) {
    Integer w = indexes.get(id);
    if (w == null) {
      throw new IllegalStateException("placement chose an unknown worker " + id);
    }
    return w;
  }

  Shape shape() {
    return shape;
  }

  int disksPerWorker() {
    return tiers.length;
  }

  DiskTier tier(int disk) {
    return tiers[disk];
  }

  /** Usable bytes of disk {@code disk} of every worker when it is neither full nor broken. */
  long usableBytes(int disk) {
    return usableBytes[disk];
  }

  Kind kind(int worker, int disk) {
    return kinds[worker][disk];
  }
}
