package io.faro.master.placement;

import io.faro.master.state.DiskSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * One usable disk of a candidate worker during one call of {@link LoadAwarePlacement}: how many
 * partitions its free space takes, and what the steps of that call work out for it (its load score,
 * group and weight, and the slots handed to it so far). Not shared between calls, nor threads.
 */
final class DiskSlot {
  /** The worker's index in the call's list of usable candidates. */
  final int worker;

  final DiskSpec spec;
  // The worker's latest report on it; null when it has not reported the disk yet.
  final DiskLoad load;
  // Slots its space allows before this request; Long.MAX_VALUE when nothing bounds it.
  final long room;
  double score;
  int group;
  double weight;
  long taken;

  DiskSlot(int worker, DiskSpec spec, DiskLoad load, long room) {
    this.worker = worker;
    this.spec = spec;
    this.load = load;
    this.room = room;
  }

  /** Slots it still has room for; Long.MAX_VALUE when nothing bounds it. */
  long roomLeft() {
    return room == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, room - taken);
  }

  /**
   * Every usable disk of every candidate, by candidate, with its room for partitions of {@code
   * partitionBytes} (at least 1): its fillable bytes over that, less the partitions it holds open;
   * a disk not reported yet by its declared capacity, or unbounded when that is unknown.
   */
  static List<List<DiskSlot>> of(List<WorkerCandidate> usable, long partitionBytes) {
    long size = Math.max(1, partitionBytes);
    List<List<DiskSlot>> byWorker = new ArrayList<>(usable.size());
    for (int w = 0; w < usable.size(); w++) {
      WorkerCandidate candidate = usable.get(w);
      List<DiskSlot> own = new ArrayList<>();
      for (DiskSpec spec : candidate.usableDisks()) {
        DiskLoad load = candidate.latestLoads().get(spec.index());
        long room;
        if (load == null) {
          // Not reported yet: its declared size is all there is to go by.
          room = spec.capacityBytes() > 0 ? spec.capacityBytes() / size : Long.MAX_VALUE;
        } else {
          room = Math.max(0, load.fillableBytes() / size - load.activePartitions());
        }
        own.add(new DiskSlot(w, spec, load, room));
      }
      byWorker.add(own);
    }
    return byWorker;
  }

  /** {@code a + b}, or Long.MAX_VALUE where that overflows: room adds up without wrapping. */
  static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}
