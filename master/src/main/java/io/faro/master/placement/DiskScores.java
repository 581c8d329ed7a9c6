package io.faro.master.placement;

import io.faro.common.id.DiskTier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The load model of {@link LoadAwarePlacement}: within each tier, scores every disk by its recent
 * write and read time per MiB ({@code flushWeight * flush + fetchWeight * read}; a time the disk
 * has not measured lately counts as its tier's mean), sorts the tier's disks by score into {@code
 * diskGroups} groups of equal size, where disks of about the same speed share a group, and gives a
 * disk of each faster group {@code gradient} times the weight of one in the next. Sets {@code
 * score}, {@code group} and {@code weight} of each {@link DiskSlot}.
 */
final class DiskScores {
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

  private DiskScores() {}

  /** Scores each disk, sorts each tier's disks into groups, and gives each group its weight. */
  static void weigh(List<DiskSlot> all, LoadAwarePlacement.Settings settings) {
    for (DiskTier tier : DiskTier.values()) {
      List<DiskSlot> inTier = new ArrayList<>();
      for (DiskSlot s : all) {
        if (s.spec.tier() == tier) {
          inTier.add(s);
        }
      }
      score(inTier, settings);
      inTier.sort(Comparator.comparingDouble(s -> s.score));
      group(inTier, settings);
    }
  }

  /** Scores the disks of one tier. */
  private static void score(List<DiskSlot> inTier, LoadAwarePlacement.Settings settings) {
    double flushSum = 0;
    double readSum = 0;
    int flushes = 0;
    int reads = 0;
    for (DiskSlot s : inTier) {
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
    for (DiskSlot s : inTier) {
      double flush =
          s.load != null && s.load.flushMsPerMiB() > 0 ? s.load.flushMsPerMiB() : flushMean;
      double read = s.load != null && s.load.readMsPerMiB() > 0 ? s.load.readMsPerMiB() : readMean;
      s.score = settings.flushWeight() * flush + settings.fetchWeight() * read;
    }
  }

  /** Puts the disks of one tier, sorted by score, into groups, and weighs each by its group. */
  private static void group(List<DiskSlot> inTier, LoadAwarePlacement.Settings settings) {
    int groups = settings.diskGroups();
    double runStart = 0;
    int runGroup = 0;
    for (int i = 0; i < inTier.size(); i++) {
      DiskSlot s = inTier.get(i);
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
