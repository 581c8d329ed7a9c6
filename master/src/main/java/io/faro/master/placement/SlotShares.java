package io.faro.master.placement;

import io.faro.common.id.DiskTier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * Hands a number of slots to a set of disks for {@link LoadAwarePlacement}: to the fastest tier
 * with room first and only what it has no room for to the next, within a tier in proportion to the
 * disks' weights and never past a disk's room, and what no disk has room for to all of them by
 * weight. Shares are water-filled (a disk whose share would pass its room gets its room, the others
 * share the rest) and made whole by systematic rounding from a random start, so that a disk owed
 * 2.4 slots gets 2 or 3, 2.4 on average.
 */
final class SlotShares {
  private SlotShares() {}

  /**
   * Gives {@code n} slots to {@code slots}, tier by tier (fastest first) within each disk's room,
   * by weight; what no disk has room for goes to all of them by weight. Counts the slots given into
   * each disk's {@code taken}, and returns them, index for index.
   */
  static long[] distribute(long n, List<DiskSlot> slots, Random random) {
    long[] counts = new long[slots.size()];
    long left = n;
    for (DiskTier tier : DiskTier.values()) {
      if (left == 0) {
        break;
      }
      List<Integer> inTier = new ArrayList<>();
      long room = 0;
      for (int i = 0; i < slots.size(); i++) {
        DiskSlot s = slots.get(i);
        if (s.spec.tier() == tier && s.roomLeft() > 0) {
          inTier.add(i);
          room = DiskSlot.saturatedAdd(room, s.roomLeft());
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
   * they have {@code k} in all). The shares are water-filled and then rounded systematically.
   */
  private static void fill(
      long k,
      List<DiskSlot> slots,
      List<Integer> indices,
      long[] counts,
      boolean capped,
      Random random) {
    int m = indices.size();
    double[] cap = new double[m];
    double[] weight = new double[m];
    for (int j = 0; j < m; j++) {
      DiskSlot s = slots.get(indices.get(j));
      long room = s.roomLeft();
      cap[j] = !capped || room == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : room;
      weight[j] = s.weight;
    }
    // Disks are capped in order of cap / weight, lowest first.
    Integer[] order = new Integer[m];
    for (int j = 0; j < m; j++) {
      order[j] = j;
    }
    Arrays.sort(order, Comparator.comparingDouble(j -> cap[j] / weight[j]));
    double[] share = waterFill(k, cap, weight, order);
    double[] fraction = new double[m];
    long given = wholeSlots(share, cap, indices, counts, fraction);
    long missing = roundFractions(k - given, fraction, indices, counts, random);
    giveLeftovers(k, missing, slots, indices, order, counts, capped);
  }

  /**
   * Each disk's share of {@code k}: {@code min(cap, level * weight)}, the water level chosen so
   * that the shares sum to {@code k}. {@code order} sorts the disks by cap over weight.
   */
  private static double[] waterFill(long k, double[] cap, double[] weight, Integer[] order) {
    int m = cap.length;
    double[] share = new double[m];
    double weights = 0;
    for (int j = 0; j < m; j++) {
      weights += weight[j];
    }
    double toGive = k;
    double weightLeft = weights;
    int firstUncapped = 0;
    while (firstUncapped < m) {
      int j = order[firstUncapped];
      if (cap[j] * weightLeft > toGive * weight[j]) {
        break;
      }
      share[j] = cap[j];
      toGive -= cap[j];
      weightLeft -= weight[j];
      firstUncapped++;
    }
    for (int o = firstUncapped; o < m; o++) {
      int j = order[o];
      share[j] = weightLeft <= 0 ? 0 : toGive * weight[j] / weightLeft;
    }
    return share;
  }

  /**
   * Adds each disk's whole slots to {@code counts} and puts what is left of its share, unless it
   * reached its cap, into {@code fraction}. Returns the slots given.
   */
  private static long wholeSlots(
      double[] share, double[] cap, List<Integer> indices, long[] counts, double[] fraction) {
    long given = 0;
    for (int j = 0; j < share.length; j++) {
      long whole = (long) Math.min(Math.floor(share[j]), cap[j]);
      counts[indices.get(j)] += whole;
      given += whole;
      fraction[j] = whole >= cap[j] ? 0 : share[j] - whole;
    }
    return given;
  }

  /**
   * Hands out {@code missing} slots by the fractions, by systematic sampling: disk j gets one more
   * with probability equal to its fraction, and exactly the missing number is handed out unless
   * rounding error leaves a slot or two. Returns those.
   */
  private static long roundFractions(
      long missing, double[] fraction, List<Integer> indices, long[] counts, Random random) {
    double point = random.nextDouble();
    double cumulative = 0;
    for (int j = 0; j < fraction.length && missing > 0; j++) {
      cumulative += fraction[j];
      if (cumulative > point) {
        counts[indices.get(j)]++;
        missing--;
        point += 1;
      }
    }
    return missing;
  }

  /** The slots rounding left: the disks with the most room per weight take them. */
  private static void giveLeftovers(
      long k,
      long missing,
      List<DiskSlot> slots,
      List<Integer> indices,
      Integer[] order,
      long[] counts,
      boolean capped) {
    while (missing > 0) {
      long before = missing;
      for (int o = order.length - 1; o >= 0 && missing > 0; o--) {
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
}
