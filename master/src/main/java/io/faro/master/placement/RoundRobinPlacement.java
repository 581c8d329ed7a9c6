package io.faro.master.placement;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
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
 * <p>A cursor shared by all requests rotates the first worker and disk, so that many small
 * requests (single-partition revives, tiny shuffles) do not all land on the first worker.
 * Thread-safe.
 */
public final class RoundRobinPlacement implements SlotPlacement {
  private final int maxWorkersPerShuffle;
  private final AtomicLong cursor = new AtomicLong();

  public RoundRobinPlacement(int maxWorkersPerShuffle) {
    if (maxWorkersPerShuffle <= 0) {
      throw new IllegalArgumentException("maxWorkersPerShuffle must be positive: " + maxWorkersPerShuffle);
    }
    this.maxWorkersPerShuffle = maxWorkersPerShuffle;
  }

  @Override
  public List<PartitionLocation> place(PlacementRequest request, List<WorkerCandidate> candidates) {
    List<WorkerCandidate> usable =
        candidates.stream().filter(c -> !c.usableDisks().isEmpty()).toList();
    if (usable.isEmpty()) {
      throw new FaroException(ErrorCode.NO_AVAILABLE_WORKERS, "no available workers for shuffle "
          + request.shuffle() + ": " + candidates.size() + " alive workers, none with a healthy "
          + "disk; start workers or wait until they register (retry later)");
    }
    int workers = Math.min(maxWorkersPerShuffle, usable.size());
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
      DiskSpec disk = workerDisks.get((int) ((dealt[w]++ + (long) diskOffset) % workerDisks.size()));
      locations.add(new PartitionLocation(request.partitions().get(i), request.epoch(),
          Role.PRIMARY, worker.id(), worker.endpoint(), disk.index()));
    }
    return locations;
  }
}
