package io.faro.bench.placement;

import io.faro.bench.placement.SimulatedCluster.Kind;
import io.faro.common.id.DiskTier;
import io.faro.master.placement.LoadAwarePlacement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The figures of one {@code bench-placement} run, counted once from its slots per disk: per tier,
 * per group of a tier and for its slow disks, the slots on full and broken disks (which must be
 * none), and the disk with the most slots against its room. {@link PlacementReport} writes them.
 */
final class PlacementTally {
  /** The usable disks of one tier that placement ranked into one group. */
  record Group(int group, int disks, long slots) {
    double perDisk() {
      return disks == 0 ? 0 : slots / (double) disks;
    }
  }

  /**
   * The figures of one tier: its disks (every worker's), the usable ones (neither full nor broken),
   * their groups, and its slow disks against its other usable ones.
   */
  record Tier(
      DiskTier tier,
      int disks,
      int usableDisks,
      long slots,
      List<Group> groups,
      int slowDisks,
      long slowSlots,
      int otherDisks,
      long otherSlots) {
    double slowPerDisk() {
      return slowDisks == 0 ? 0 : slowSlots / (double) slowDisks;
    }

    double otherPerDisk() {
      return otherDisks == 0 ? 0 : otherSlots / (double) otherDisks;
    }
  }

  private final PlacementBench.Settings settings;
  private final PlacementBench.Result result;
  private final List<Tier> tiers = new ArrayList<>();
  private long slots;
  private long onFull;
  private long onBroken;
  private long mostOnOneDisk;
  private long roomOfThatDisk;
  private int disksPastTheirRoom;

  PlacementTally(PlacementBench.Settings settings, PlacementBench.Result result) {
    this.settings = settings;
    this.result = result;
    tally();
  }

  private void tally() {
    SimulatedCluster cluster = result.cluster();
    int workers = settings.shape().workers();
    int disks = cluster.disksPerWorker();
    int[][] groups = new int[workers][disks];
    for (int[] row : groups) {
      Arrays.fill(row, -1);
    }
    for (LoadAwarePlacement.RankedDisk d : result.ranked()) {
      groups[cluster.index(d.worker())][d.disk()] = d.group();
    }
    int groupCount = settings.loadAware().diskGroups();
    for (DiskTier tier : DiskTier.values()) {
      int inTier = 0;
      int usable = 0;
      long tierSlots = 0;
      int[] groupDisks = new int[groupCount];
      long[] groupSlots = new long[groupCount];
      int slow = 0;
      long slowSlots = 0;
      int other = 0;
      long otherSlots = 0;
      for (int w = 0; w < workers; w++) {
        for (int d = 0; d < disks; d++) {
          if (cluster.tier(d) != tier) {
            continue;
          }
          inTier++;
          long n = result.slots()[w][d];
          tierSlots += n;
          Kind kind = cluster.kind(w, d);
          if (kind == Kind.FULL) {
            onFull += n;
            continue;
          }
          if (kind == Kind.BROKEN) {
            onBroken += n;
            continue;
          }
          usable++;
          if (groups[w][d] >= 0) {
            groupDisks[groups[w][d]]++;
            groupSlots[groups[w][d]] += n;
          }
          if (kind == Kind.SLOW) {
            slow++;
            slowSlots += n;
          } else {
            other++;
            otherSlots += n;
          }
          long room = cluster.usableBytes(d) / settings.partitionBytes();
          if (n > mostOnOneDisk) {
            mostOnOneDisk = n;
            roomOfThatDisk = room;
          }
          if (n > room) {
            disksPastTheirRoom++;
          }
        }
      }
      if (inTier == 0) {
        continue;
      }
      slots += tierSlots;
      List<Group> present = new ArrayList<>();
      for (int g = 0; g < groupCount; g++) {
        if (groupDisks[g] > 0) {
          present.add(new Group(g, groupDisks[g], groupSlots[g]));
        }
      }
      tiers.add(
          new Tier(tier, inTier, usable, tierSlots, present, slow, slowSlots, other, otherSlots));
    }
  }

  List<Tier> tiers() {
    return tiers;
  }

  /** Partitions placed over all measured requests. */
  long slots() {
    return slots;
  }

  long onFull() {
    return onFull;
  }

  long onBroken() {
    return onBroken;
  }

  long mostOnOneDisk() {
    return mostOnOneDisk;
  }

  /** The room (usable bytes / partition size) of the disk with the most slots. */
  long roomOfThatDisk() {
    return roomOfThatDisk;
  }

  int disksPastTheirRoom() {
    return disksPastTheirRoom;
  }
}
