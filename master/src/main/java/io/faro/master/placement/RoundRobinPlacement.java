package io.faro.master.placement;

import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.master.state.DiskSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Deals partitions to workers like cards: partition i of a request goes to the i-th chosen worker
 * (modulo their number), and each worker deals its partitions over its usable disks in turn. A
 * shuffle spreads over at most {@code maxWorkersPerShuffle} workers (seed 000: one huge shuffle
 * must not open a connection from every map task to every worker).
 *
 * <p>With replication, each worker's replicas go to the next chosen worker on another host (the
 * next chosen worker when every worker shares one host), so that one primary forwards to one peer
 * and losing one machine never loses both copies.
 *
 * <p>A cursor shared by all requests rotates the first worker and disk, so that many small requests
 * (single-partition revives, tiny shuffles) do not all land on the first worker. Thread-safe.
 */
public final class RoundRobinPlacement implements SlotPlacement {
  private final int maxWorkersPerShuffle;
  private final AtomicLong cursor = new AtomicLong();

  public RoundRobinPlacement(int maxWorkersPerShuffle) {
    if (maxWorkersPerShuffle <= 0) {
      throw new IllegalArgumentException(
          "maxWorkersPerShuffle must be positive: " + maxWorkersPerShuffle);
    }
    this.maxWorkersPerShuffle = maxWorkersPerShuffle;
  }

  @Override
  public List<PartitionLocation> place(PlacementRequest request, List<WorkerCandidate> candidates) {
    List<WorkerCandidate> usable = Candidates.usable(request, candidates);
    int workers = Candidates.workerCount(request, usable.size(), maxWorkersPerShuffle);
    long start = cursor.getAndAdd(request.partitions().size());
    int first = (int) Math.floorMod(start, (long) usable.size());
    int diskOffset = (int) Math.floorMod(start / usable.size(), (long) Integer.MAX_VALUE);

    List<WorkerCandidate> chosen = new ArrayList<>(workers);
    List<List<DiskSpec>> disks = new ArrayList<>(workers);
    for (int k = 0; k < workers; k++) {
      WorkerCandidate candidate = usable.get((first + k) % usable.size());
      chosen.add(candidate);
      disks.add(candidate.usableDisks());
    }
    int[] dealt = new int[workers];
    List<PartitionLocation> locations = new ArrayList<>(request.partitions().size());
    for (int i = 0; i < request.partitions().size(); i++) {
      int w = i % workers;
      WorkerCandidate worker = chosen.get(w);
      List<DiskSpec> workerDisks = disks.get(w);
      DiskSpec disk =
          workerDisks.get((int) ((dealt[w]++ + (long) diskOffset) % workerDisks.size()));
      PartitionLocation primary =
          Candidates.location(request, i, Role.PRIMARY, worker, disk.index());
      if (request.replicate()) {
        int r = Candidates.replicaOf(chosen, w);
        WorkerCandidate peer = chosen.get(r);
        List<DiskSpec> peerDisks = disks.get(r);
        DiskSpec peerDisk =
            peerDisks.get((int) ((dealt[r]++ + (long) diskOffset) % peerDisks.size()));
        primary =
            primary.withReplica(
                Candidates.location(request, i, Role.REPLICA, peer, peerDisk.index()));
      }
      locations.add(primary);
    }
    return locations;
  }
}
