package io.faro.master.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.state.DiskSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LoadAwarePlacementTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app"), 0);
  private static final long MIB = 1 << 20;
  private static final long PARTITION = 64 * MIB;

  /** A disk of a simulated worker: tier, usable bytes, open partitions, ms per MiB. */
  private record Sim(DiskTier tier, long usable, int active, double flushMs, double readMs) {
    static Sim ssd(long usable, double ms) {
      return new Sim(DiskTier.SSD, usable, 0, ms, ms);
    }
  }

  private static WorkerCandidate worker(String id, List<Sim> disks) {
    List<DiskSpec> specs = new ArrayList<>();
    Map<Integer, DiskLoad> loads = new HashMap<>();
    for (int i = 0; i < disks.size(); i++) {
      Sim d = disks.get(i);
      specs.add(new DiskSpec(i, "/d" + i, d.tier(), 1L << 42));
      loads.put(
          i,
          new DiskLoad(i, d.usable(), DiskStatus.HEALTHY, d.active(), d.flushMs(), d.readMs(), 0));
    }
    return new WorkerCandidate(
        new WorkerId(id), new WorkerEndpoint("host-" + id, 1, 2, 3), specs, loads);
  }

  private static LoadAwarePlacement placement(int maxWorkers) {
    return new LoadAwarePlacement(
        new LoadAwarePlacement.Settings(maxWorkers, 0.5, 0.5, 5, 1.1), () -> PARTITION);
  }

  private static PlacementRequest request(int partitions, boolean replicate) {
    return new PlacementRequest(
        SHUFFLE, IntStream.range(0, partitions).boxed().toList(), 0, replicate);
  }

  private static String disk(PartitionLocation l) {
    return l.worker().value() + "/" + l.diskIndex();
  }

  private static <K> Map<K, Long> countBy(
      List<PartitionLocation> locations, Function<PartitionLocation, K> key) {
    return locations.stream().collect(Collectors.groupingBy(key, Collectors.counting()));
  }

  /** 1,000 workers x 12 SSDs with distinct random speeds and room for {@code slotsPerDisk}. */
  private static List<WorkerCandidate> cluster(long slotsPerDisk, Random random) {
    return IntStream.range(0, 1000)
        .mapToObj(
            w ->
                worker(
                    String.format("w%04d", w),
                    IntStream.range(0, 12)
                        // Speeds spread over four orders of magnitude, so that runs of disks
                        // of about the same speed are short and the five groups about as
                        // large as each other.
                        .mapToObj(
                            d ->
                                Sim.ssd(
                                    slotsPerDisk * PARTITION,
                                    Math.pow(10, 4 * random.nextDouble())))
                        .toList()))
        .toList();
  }

  @Test
  void onAThousandWorkersGroupSharesFollowTheGradientAndNoDiskPassesItsRoom() {
    List<WorkerCandidate> workers = cluster(3, new Random(7));
    LoadAwarePlacement placement = placement(1000);
    Map<String, Integer> groupOf = new HashMap<>();
    placement
        .rank(workers)
        .forEach(r -> groupOf.put(r.worker().value() + "/" + r.disk(), r.group()));
    assertThat(groupOf).hasSize(12_000);

    long[] slotsOfGroup = new long[5];
    long[] disksOfGroup = new long[5];
    groupOf.values().forEach(g -> disksOfGroup[g]++);
    assertThat(java.util.Arrays.stream(disksOfGroup).boxed().toList())
        .allSatisfy(n -> assertThat(n).isBetween(1_500L, 3_500L));
    for (int round = 0; round < 10; round++) {
      List<PartitionLocation> placed = placement.place(request(10_000, false), workers);
      assertThat(placed)
          .extracting(PartitionLocation::partition)
          .containsExactlyElementsOf(IntStream.range(0, 10_000).boxed().toList());
      Map<String, Long> perDisk = countBy(placed, LoadAwarePlacementTest::disk);
      // Room for 3 each (36,000 in all): nothing goes past it.
      assertThat(perDisk.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(3));
      perDisk.forEach((d, n) -> slotsOfGroup[groupOf.get(d)] += n);
    }
    // Per disk, each faster group gets 1.1 times the slots of the next.
    for (int g = 0; g < 4; g++) {
      double faster = (double) slotsOfGroup[g] / disksOfGroup[g];
      double slower = (double) slotsOfGroup[g + 1] / disksOfGroup[g + 1];
      assertThat(faster / slower)
          .as("group %d over group %d: %s", g, g + 1, java.util.Arrays.toString(slotsOfGroup))
          .isCloseTo(1.1, within(0.04));
    }
  }

  @Test
  void disksOfAboutTheSameSpeedShareAGroup() {
    List<WorkerCandidate> workers =
        List.of(
            worker(
                "w0",
                List.of(Sim.ssd(1L << 40, 1.0), Sim.ssd(1L << 40, 1.3), Sim.ssd(1L << 40, 1.4))),
            worker("w1", List.of(Sim.ssd(1L << 40, 1.2), Sim.ssd(1L << 40, 30))));
    Map<String, Integer> groups = new HashMap<>();
    placement(500)
        .rank(workers)
        .forEach(r -> groups.put(r.worker().value() + "/" + r.disk(), r.group()));
    assertThat(groups)
        .containsEntry("w0/0", 0)
        .containsEntry("w0/1", 0)
        .containsEntry("w0/2", 0)
        .containsEntry("w1/0", 0)
        .containsEntry("w1/1", 4); // rank 4 of 5
  }

  @Test
  void slowDisksGetFewerSlotsThanTheirPeers() {
    // 20 workers x 4 disks, one disk of every worker ten times slower.
    List<WorkerCandidate> workers =
        IntStream.range(0, 20)
            .mapToObj(
                w ->
                    worker(
                        "w" + w,
                        List.of(
                            Sim.ssd(1L << 40, 1),
                            Sim.ssd(1L << 40, 1),
                            Sim.ssd(1L << 40, 1),
                            Sim.ssd(1L << 40, 10))))
            .toList();
    Map<Integer, Long> perDiskIndex = new HashMap<>();
    for (int round = 0; round < 20; round++) {
      countBy(placement(500).place(request(2_000, false), workers), PartitionLocation::diskIndex)
          .forEach((d, n) -> perDiskIndex.merge(d, n, Long::sum));
    }
    double fast = (perDiskIndex.get(0) + perDiskIndex.get(1) + perDiskIndex.get(2)) / 3.0;
    // The 60 fast disks tie, so they share the fastest group; the 20 slow ones tie too, and take
    // the group of the first of them by rank: rank 60 of 80 is in group 3 (ranks 48-63).
    assertThat(fast / perDiskIndex.get(3)).isCloseTo(Math.pow(1.1, 3), within(0.05));
  }

  @Test
  void theWorkerCapHoldsAndReplicasGoToAnotherHost() {
    List<WorkerCandidate> workers = cluster(100, new Random(3));
    List<PartitionLocation> placed = placement(50).place(request(10_000, true), workers);

    assertThat(countBy(placed, PartitionLocation::worker)).hasSizeLessThanOrEqualTo(50);
    assertThat(placed)
        .allSatisfy(
            l -> {
              PartitionLocation replica = l.replica().orElseThrow();
              assertThat(replica.endpoint().host()).isNotEqualTo(l.endpoint().host());
              assertThat(replica.diskIndex()).isBetween(0, 11);
            });
    assertThat(placed.stream().map(l -> l.replica().orElseThrow().worker()).distinct().count())
        .isLessThanOrEqualTo(50);
    // Each disk carries its primaries and replicas within its room.
    Map<String, Long> perDisk = countBy(placed, LoadAwarePlacementTest::disk);
    placed.forEach(l -> perDisk.merge(disk(l.replica().orElseThrow()), 1L, Long::sum));
    assertThat(perDisk.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(100));
  }

  @Test
  void theFastestTierTakesWhatItHasRoomForAndTheNextTheRest() {
    // Each worker: an NVMe disk with room for 5 partitions, and an HDD with room for plenty.
    List<WorkerCandidate> workers =
        IntStream.range(0, 4)
            .mapToObj(
                w ->
                    worker(
                        "w" + w,
                        List.of(
                            new Sim(DiskTier.HDD, 1L << 40, 0, 5, 5),
                            new Sim(DiskTier.NVME, 5 * PARTITION, 0, 0.2, 0.2))))
            .toList();

    List<PartitionLocation> few = placement(500).place(request(12, false), workers);
    assertThat(few).allSatisfy(l -> assertThat(l.diskIndex()).isEqualTo(1));

    List<PartitionLocation> many = placement(500).place(request(100, false), workers);
    Map<Integer, Long> perTier = countBy(many, PartitionLocation::diskIndex);
    assertThat(perTier.get(1)).as("NVMe: 4 disks x 5").isEqualTo(20);
    assertThat(perTier.get(0)).as("HDD: the rest").isEqualTo(80);
  }

  @Test
  void openPartitionsCountAgainstADisksRoom() {
    List<WorkerCandidate> workers =
        List.of(
            worker("w0", List.of(new Sim(DiskTier.SSD, 10 * PARTITION, 8, 1, 1))),
            worker("w1", List.of(new Sim(DiskTier.SSD, 10 * PARTITION, 0, 1, 1))));
    Map<WorkerId, Long> perWorker =
        countBy(placement(500).place(request(12, false), workers), PartitionLocation::worker);
    assertThat(perWorker.get(new WorkerId("w0"))).isEqualTo(2);
    assertThat(perWorker.get(new WorkerId("w1"))).isEqualTo(10);
  }

  @Test
  void whenNoDiskHasRoomByTheEstimateEveryPartitionIsStillPlaced() {
    List<WorkerCandidate> workers =
        List.of(
            worker("w0", List.of(Sim.ssd(PARTITION / 2, 1), Sim.ssd(PARTITION / 2, 1))),
            worker("w1", List.of(Sim.ssd(PARTITION / 2, 1))));
    List<PartitionLocation> placed = placement(500).place(request(300, false), workers);
    assertThat(placed).hasSize(300);
    assertThat(countBy(placed, LoadAwarePlacementTest::disk).values())
        .allSatisfy(n -> assertThat(n).isBetween(95L, 105L));
  }

  @Test
  void disksWithoutMeasurementsCountAsAverageAndEqualDisksShareEvenly() {
    List<WorkerCandidate> idle =
        IntStream.range(0, 3)
            .mapToObj(w -> worker("w" + w, List.of(Sim.ssd(1L << 40, 0), Sim.ssd(1L << 40, 0))))
            .toList();
    assertThat(placement(500).rank(idle)).allSatisfy(r -> assertThat(r.group()).isZero());
    List<PartitionLocation> placed = placement(500).place(request(600, false), idle);
    assertThat(countBy(placed, LoadAwarePlacementTest::disk).values())
        .allSatisfy(n -> assertThat(n).isEqualTo(100));
    // Consecutive partitions go to different workers.
    for (int i = 1; i < placed.size(); i++) {
      assertThat(placed.get(i).worker()).isNotEqualTo(placed.get(i - 1).worker());
    }
  }

  @Test
  void smallRequestsSpreadOverDisksRatherThanAllLandingOnTheFirst() {
    List<WorkerCandidate> workers = cluster(100, new Random(11)).subList(0, 50);
    Map<String, Long> perDisk = new HashMap<>();
    for (int i = 0; i < 3000; i++) {
      placement(500)
          .place(request(1, false), workers)
          .forEach(l -> perDisk.merge(disk(l), 1L, Long::sum));
    }
    assertThat(perDisk).as("single-partition requests over 600 disks").hasSizeGreaterThan(500);
  }

  @Test
  void refusesLikeRoundRobinWhenNoWorkerHasAUsableDisk() {
    WorkerCandidate broken =
        new WorkerCandidate(
            new WorkerId("w0"),
            new WorkerEndpoint("h", 1, 2, 3),
            List.of(new DiskSpec(0, "/d0", DiskTier.SSD, 1L << 40)),
            Map.of(0, new DiskLoad(0, 0, DiskStatus.BROKEN, 0, 0, 0, 0)));
    assertThatThrownBy(() -> placement(500).place(request(1, false), List.of(broken)))
        .isInstanceOfSatisfying(
            FaroException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.NO_AVAILABLE_WORKERS));
    assertThatThrownBy(
            () ->
                placement(500)
                    .place(request(1, true), List.of(worker("w1", List.of(Sim.ssd(1L << 40, 1))))))
        .isInstanceOfSatisfying(
            FaroException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.NO_AVAILABLE_WORKERS));
  }

  @Test
  void timesFromTheWireThatMakeNoSenseCountAsUnmeasured() {
    DiskLoad load = new DiskLoad(0, 1, DiskStatus.HEALTHY, 0, Double.NaN, -3, 0);
    assertThat(load.flushMsPerMiB()).isZero();
    assertThat(load.readMsPerMiB()).isZero();
    assertThat(
            new DiskLoad(0, 1, DiskStatus.HEALTHY, 0, Double.POSITIVE_INFINITY, 0, 0)
                .flushMsPerMiB())
        .isEqualTo(DiskLoad.MAX_MS_PER_MIB);
  }

  @Test
  void underAWorkerCapTheWorkersWithRoomOnTheFastestTierAreChosenFirst() {
    // 100 workers, 10 of them with an NVMe disk besides their HDD; a cap of 10 workers.
    List<WorkerCandidate> workers =
        IntStream.range(0, 100)
            .mapToObj(
                w ->
                    worker(
                        String.format("w%03d", w),
                        w % 10 == 0
                            ? List.of(
                                new Sim(DiskTier.HDD, 1L << 40, 0, 5, 5),
                                new Sim(DiskTier.NVME, 1L << 40, 0, 0.2, 0.2))
                            : List.of(new Sim(DiskTier.HDD, 1L << 40, 0, 5, 5))))
            .toList();
    for (int round = 0; round < 20; round++) {
      List<PartitionLocation> placed = placement(10).place(request(200, false), workers);
      assertThat(placed)
          .as("round %d", round)
          .allSatisfy(l -> assertThat(l.diskIndex()).isEqualTo(1));
    }
  }

  @Test
  void theTiersReserveIsNotRoom() {
    // 2 GiB usable, 1 GiB of it the reserve: room for 16 partitions of 64 MiB, not 32.
    WorkerCandidate small =
        new WorkerCandidate(
            new WorkerId("w0"),
            new WorkerEndpoint("h0", 1, 2, 3),
            List.of(new DiskSpec(0, "/d0", DiskTier.NVME, 1L << 40)),
            Map.of(0, new DiskLoad(0, 2L << 30, DiskStatus.HEALTHY, 0, 1, 1, 1L << 30)));
    WorkerCandidate big = worker("w1", List.of(new Sim(DiskTier.HDD, 1L << 40, 0, 5, 5)));
    Map<WorkerId, Long> perWorker =
        countBy(
            placement(500).place(request(40, false), List.of(small, big)),
            PartitionLocation::worker);
    assertThat(perWorker.get(new WorkerId("w0"))).isEqualTo(16);
    assertThat(perWorker.get(new WorkerId("w1"))).isEqualTo(24);
  }

  @Test
  void aDiskThatOnlyReadLatelyIsNotTakenForTheFastest() {
    // Four disks that wrote and read at 1 ms per MiB; a fifth only read (at 1), wrote nothing.
    List<Sim> disks = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      disks.add(Sim.ssd(1L << 40, 1));
    }
    disks.add(new Sim(DiskTier.SSD, 1L << 40, 0, 0, 1));
    assertThat(placement(500).rank(List.of(worker("w0", disks))))
        .extracting(LoadAwarePlacement.RankedDisk::score)
        .containsOnly(1.0);
  }

  @Test
  void hostileLoadsPlaceLikeEmptyOnes() {
    WorkerCandidate hostile =
        new WorkerCandidate(
            new WorkerId("w0"),
            new WorkerEndpoint("h0", 1, 2, 3),
            List.of(new DiskSpec(0, "/d0", DiskTier.SSD, 1L << 40)),
            Map.of(
                0,
                new DiskLoad(
                    0, -5, DiskStatus.HEALTHY, Integer.MIN_VALUE, Double.NaN, -1, Long.MIN_VALUE)));
    DiskLoad load = hostile.latestLoads().get(0);
    assertThat(load.usableBytes()).isZero();
    assertThat(load.activePartitions()).isZero();
    assertThat(load.fillableBytes()).isZero();
    WorkerCandidate normal = worker("w1", List.of(Sim.ssd(1L << 40, 1)));
    List<PartitionLocation> placed =
        placement(500).place(request(50, false), List.of(hostile, normal));
    assertThat(placed).hasSize(50).allSatisfy(l -> assertThat(l.worker().value()).isEqualTo("w1"));
  }

  @Test
  void thePartitionSizeEstimateFollowsCommitsAboveItsFloor() {
    PartitionSizeEstimate estimate = new PartitionSizeEstimate(64 * MIB, MIB);
    assertThat(estimate.update(List.of())).isEqualTo(64 * MIB);
    assertThat(estimate.update(List.of(10 * MIB))).isEqualTo(10 * MIB);
    assertThat(estimate.update(List.of()))
        .as("nothing committed lately: the last")
        .isEqualTo(10 * MIB);
    assertThat(estimate.update(List.of(1L))).as("floored").isEqualTo(MIB);
    // One worker's absurd report moves nothing: the median of the workers counts.
    assertThat(estimate.update(List.of(8 * MIB, Long.MAX_VALUE, 9 * MIB))).isEqualTo(9 * MIB);
  }
}
