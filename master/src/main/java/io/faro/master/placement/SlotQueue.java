package io.faro.master.placement;

import java.util.ArrayList;
import java.util.List;

/**
 * The disk indices one worker was given in one call of {@link LoadAwarePlacement}, taken in turn
 * (disk A three times and B twice give A B A B A), so that a worker's consecutive partitions land
 * on different disks.
 */
final class SlotQueue {
  private final int[] disks;
  private int next;

  SlotQueue(int[] disks) {
    this.disks = disks;
  }

  /**
   * Each worker's queue, for the slots {@code counts} gives its disks ({@code counts} index for
   * index with {@code all}, the disks of {@code byWorker} one worker after the other).
   */
  static List<SlotQueue> of(List<List<DiskSlot>> byWorker, List<DiskSlot> all, long[] counts) {
    List<SlotQueue> queues = new ArrayList<>(byWorker.size());
    int offset = 0;
    for (List<DiskSlot> own : byWorker) {
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
