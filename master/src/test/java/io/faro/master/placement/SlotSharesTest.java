package io.faro.master.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.DiskTier;
import io.faro.master.state.DiskSpec;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * How slots are handed to disks: fastest tier first within room, by weight, water-filled, and
 * rounded so that the counts add up exactly; and how a worker's slots take its disks in turn.
 */
class SlotSharesTest {
  private static DiskSlot disk(int index, DiskTier tier, long room, double weight) {
    DiskSlot slot = new DiskSlot(0, new DiskSpec(index, "/d" + index, tier, 1L << 40), null, room);
    slot.weight = weight;
    return slot;
  }

  @Test
  void theFastestTierTakesWhatItHasRoomForAndTheNextTheRest() {
    DiskSlot nvme = disk(0, DiskTier.NVME, 5, 1);
    DiskSlot hdd = disk(1, DiskTier.HDD, 100, 1);

    long[] counts = SlotShares.distribute(20, List.of(nvme, hdd), new Random(1));

    assertThat(counts).containsExactly(5, 15);
    assertThat(nvme.taken).isEqualTo(5);
    assertThat(hdd.taken).isEqualTo(15);
    assertThat(nvme.roomLeft()).isZero();
  }

  @Test
  void sharesFollowTheWeightsAndADiskShortOfRoomGetsItsRoom() {
    DiskSlot heavy = disk(0, DiskTier.SSD, Long.MAX_VALUE, 2);
    DiskSlot light = disk(1, DiskTier.SSD, Long.MAX_VALUE, 1);
    assertThat(SlotShares.distribute(300, List.of(heavy, light), new Random(2)))
        .containsExactly(200, 100);

    // By weight the small disk would get 5 of 10; it has room for 2, the other takes the rest.
    DiskSlot small = disk(0, DiskTier.SSD, 2, 1);
    DiskSlot large = disk(1, DiskTier.SSD, 100, 1);
    assertThat(SlotShares.distribute(10, List.of(small, large), new Random(3)))
        .containsExactly(2, 8);
  }

  @Test
  void whatNoDiskHasRoomForIsSpreadOverAllByWeight() {
    DiskSlot full = disk(0, DiskTier.SSD, 0, 1);
    DiskSlot alsoFull = disk(1, DiskTier.HDD, 0, 1);

    assertThat(SlotShares.distribute(10, List.of(full, alsoFull), new Random(4)))
        .containsExactly(5, 5);
  }

  @Test
  void fractionsAreRoundedSoThatTheCountsAddUpAndAverageTheShares() {
    long[] sums = new long[3];
    Random random = new Random(5);
    int rounds = 3000;
    for (int round = 0; round < rounds; round++) {
      List<DiskSlot> disks =
          List.of(
              disk(0, DiskTier.SSD, Long.MAX_VALUE, 1),
              disk(1, DiskTier.SSD, Long.MAX_VALUE, 1),
              disk(2, DiskTier.SSD, Long.MAX_VALUE, 1));
      long[] counts = SlotShares.distribute(10, disks, random);
      assertThat(Arrays.stream(counts).sum()).isEqualTo(10);
      assertThat(Arrays.stream(counts).boxed().toList())
          .allSatisfy(c -> assertThat(c).isBetween(3L, 4L));
      for (int d = 0; d < 3; d++) {
        sums[d] += counts[d];
      }
    }
    // Each disk is owed 10/3 slots: over many requests it gets about that.
    assertThat(Arrays.stream(sums).boxed().toList())
        .allSatisfy(s -> assertThat((double) s / rounds).isBetween(3.28, 3.39));
  }

  @Test
  void aWorkersSlotsTakeItsDisksInTurn() {
    DiskSlot a = disk(7, DiskTier.SSD, 10, 1);
    DiskSlot b = disk(9, DiskTier.SSD, 10, 1);
    DiskSlot c = disk(3, DiskTier.SSD, 10, 1);

    List<SlotQueue> queues =
        SlotQueue.of(List.of(List.of(a, b), List.of(c)), List.of(a, b, c), new long[] {3, 2, 1});

    SlotQueue first = queues.get(0);
    assertThat(first.size()).isEqualTo(5);
    int[] taken = new int[5];
    for (int i = 0; i < 5; i++) {
      taken[i] = first.next();
    }
    assertThat(taken).containsExactly(7, 9, 7, 9, 7);
    assertThat(first.isEmpty()).isTrue();
    assertThat(queues.get(1).next()).isEqualTo(3);
  }
}
