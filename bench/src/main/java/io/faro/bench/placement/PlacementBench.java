package io.faro.bench.placement;

import static java.util.Objects.requireNonNull;

import io.faro.bench.run.LatencySamples;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.master.MasterServerOptions.SlotsPolicy;
import io.faro.master.placement.LoadAwarePlacement;
import io.faro.master.placement.PlacementPolicy;
import io.faro.master.placement.PlacementRequest;
import io.faro.master.placement.RoundRobinPlacement;
import io.faro.master.placement.SlotPlacement;
import io.faro.master.placement.WorkerState;
import java.util.BitSet;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Places shuffles on a {@link SimulatedCluster} with the leader's own placement code ({@link
 * PlacementPolicy} around {@link LoadAwarePlacement} or {@link RoundRobinPlacement}), timing each
 * request and counting where its partitions went. What it times is what a slot request costs the
 * leader before the Raft commit: choosing candidates, ranking their disks, and placing.
 */
final class PlacementBench {
  private static final AppId APP = new AppId("bench-placement");

  /**
   * One run.
   *
   * @param loadAware the load-aware settings; {@code maxWorkersPerShuffle} also caps round robin
   * @param partitionBytes the estimated partition size (no worker commits anything here, so the
   *     estimate stays what faro.master.slots.partition.size.initial says)
   * @param warmups requests placed first and not measured, so that the JIT compilers are done
   */
  record Settings(
      SimulatedCluster.Shape shape,
      SlotsPolicy policy,
      LoadAwarePlacement.Settings loadAware,
      long partitionBytes,
      int partitions,
      int requests,
      int warmups) {
    Settings {
      requireNonNull(shape, "shape is null");
      requireNonNull(policy, "policy is null");
      requireNonNull(loadAware, "loadAware is null");
      if (partitionBytes <= 0 || partitions <= 0 || requests <= 0 || warmups < 0) {
        throw new IllegalArgumentException(
            "bad run: partition size "
                + partitionBytes
                + ", "
                + partitions
                + " partitions, "
                + requests
                + " requests, "
                + warmups
                + " warm-ups");
      }
    }
  }

  /**
   * What a run measured.
   *
   * @param ranked the disks as load-aware placement ranks them before the first request (their
   *     group), whatever the policy
   * @param latencies of every measured request
   * @param maxNanos the slowest measured request
   * @param slots partitions placed on each disk, by worker index and disk index, over all measured
   *     requests
   * @param workersPerRequest distinct workers each measured request got
   */
  record Result(
      SimulatedCluster cluster,
      List<LoadAwarePlacement.RankedDisk> ranked,
      LatencySamples latencies,
      long maxNanos,
      long[][] slots,
      int[] workersPerRequest) {}

  private PlacementBench() {}

  static Result run(Settings settings) {
    SimulatedCluster cluster = SimulatedCluster.build(settings.shape());
    LoadAwarePlacement loadAware =
        new LoadAwarePlacement(settings.loadAware(), settings::partitionBytes);
    List<LoadAwarePlacement.RankedDisk> ranked = loadAware.rank(cluster.candidates());
    SlotPlacement placement =
        switch (settings.policy()) {
          case LOAD_AWARE -> loadAware;
          case ROUND_ROBIN -> new RoundRobinPlacement(settings.loadAware().maxWorkersPerShuffle());
        };
    PlacementPolicy policy =
        // Placements are counted as open partitions by the bench itself (SimulatedCluster.open),
        // as the workers' next heartbeats would.
        new PlacementPolicy(placement, cluster::loads, worker -> WorkerState.SERVING, placed -> {});
    List<Integer> partitions = IntStream.range(0, settings.partitions()).boxed().toList();

    for (int i = 0; i < settings.warmups(); i++) {
      // Not counted as open partitions: the measured requests start from the cluster as built.
      policy.place(request(i, partitions), cluster.workers(), List.of(), List.of());
    }
    LatencySamples latencies = new LatencySamples(settings.shape().seed());
    long maxNanos = 0;
    long[][] slots = new long[settings.shape().workers()][cluster.disksPerWorker()];
    int[] workersPerRequest = new int[settings.requests()];
    for (int r = 0; r < settings.requests(); r++) {
      PlacementRequest request = request(settings.warmups() + r, partitions);
      long start = System.nanoTime();
      List<PartitionLocation> locations =
          policy.place(request, cluster.workers(), List.of(), List.of());
      long nanos = System.nanoTime() - start;
      latencies.record(nanos);
      maxNanos = Math.max(maxNanos, nanos);
      BitSet workers = new BitSet(slots.length);
      for (PartitionLocation l : locations) {
        int w = cluster.index(l.worker());
        slots[w][l.diskIndex()]++;
        workers.set(w);
      }
      workersPerRequest[r] = workers.cardinality();
      cluster.open(locations);
    }
    return new Result(cluster, ranked, latencies, maxNanos, slots, workersPerRequest);
  }

  private static PlacementRequest request(int shuffle, List<Integer> partitions) {
    return new PlacementRequest(new ShuffleId(APP, shuffle), partitions, 0);
  }
}
