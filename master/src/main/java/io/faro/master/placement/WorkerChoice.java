package io.faro.master.placement;

import io.faro.common.id.DiskTier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * Which workers one request of {@link LoadAwarePlacement} spreads over when it may not use them
 * all: those whose fastest tier with room is the fastest first, and within a tier at random, a
 * worker the likelier the more room it has there.
 */
final class WorkerChoice {
  private WorkerChoice() {}

  /**
   * {@code count} of the workers, ascending: all when there are no more. Otherwise those whose
   * fastest tier with room is the fastest first (so that a cap does not pass over the NVMe workers
   * while they have room), and within a tier at random, a worker the more likely the more room it
   * has there, up to what the request needs (weighted sampling without replacement: the largest
   * {@code log(u) / weight} win); workers without room last.
   *
   * @param disks each worker's disks
   * @param need the partitions the request places
   */
  static List<Integer> choose(List<List<DiskSlot>> disks, int count, long need, Random random) {
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
      for (DiskSlot s : disks.get(w)) {
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
          room = DiskSlot.saturatedAdd(room, left);
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
}
