package io.faro.master.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.master.state.DiskSpec;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RoundRobinPlacementTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app"), 0);

  private static WorkerCandidate worker(String id, int disks, DiskLoad... loads) {
    return new WorkerCandidate(
        new WorkerId(id),
        new WorkerEndpoint("host-" + id, 1, 2, 3),
        IntStream.range(0, disks)
            .mapToObj(i -> new DiskSpec(i, "/d" + i, DiskTier.SSD, 1L << 40))
            .toList(),
        Arrays.stream(loads).collect(Collectors.toMap(DiskLoad::index, Function.identity())));
  }

  private static DiskLoad disk(int index, DiskStatus status) {
    return new DiskLoad(index, 1L << 30, status, 0, 0, 0, 0);
  }

  private static PlacementRequest request(int partitions, int epoch) {
    return new PlacementRequest(SHUFFLE, IntStream.range(0, partitions).boxed().toList(), epoch);
  }

  private static <K> Map<K, Long> countBy(
      List<PartitionLocation> locations, Function<PartitionLocation, K> key) {
    return locations.stream().collect(Collectors.groupingBy(key, Collectors.counting()));
  }

  @Test
  void spreadsPartitionsEvenlyOverWorkersAndTheirDisks() {
    List<WorkerCandidate> workers = List.of(worker("w1", 2), worker("w2", 2), worker("w3", 2));

    List<PartitionLocation> locations =
        new RoundRobinPlacement(500).place(request(200, 3), workers);

    assertThat(locations)
        .extracting(PartitionLocation::partition)
        .containsExactlyElementsOf(IntStream.range(0, 200).boxed().toList());
    assertThat(locations)
        .allSatisfy(
            l -> {
              assertThat(l.epoch()).isEqualTo(3);
              assertThat(l.role()).isEqualTo(Role.PRIMARY);
              assertThat(l.endpoint().host()).isEqualTo("host-" + l.worker().value());
            });
    assertThat(countBy(locations, PartitionLocation::worker).values())
        .allSatisfy(n -> assertThat(n).isBetween(66L, 67L));
    assertThat(countBy(locations, l -> l.worker().value() + "/" + l.diskIndex()))
        .hasSize(6)
        .allSatisfy((disk, n) -> assertThat(n).isBetween(33L, 34L));
  }

  @Test
  void respectsTheMaxWorkersPerShuffle() {
    List<WorkerCandidate> workers =
        IntStream.range(0, 10).mapToObj(i -> worker("w" + i, 1)).toList();

    List<PartitionLocation> locations = new RoundRobinPlacement(3).place(request(100, 0), workers);

    assertThat(countBy(locations, PartitionLocation::worker)).hasSize(3);
  }

  @Test
  void successiveSmallRequestsRotateOverWorkers() {
    List<WorkerCandidate> workers = List.of(worker("w1", 1), worker("w2", 1), worker("w3", 1));
    RoundRobinPlacement placement = new RoundRobinPlacement(500);

    List<WorkerId> chosen =
        IntStream.range(0, 6)
            .mapToObj(i -> placement.place(request(1, 1), workers).get(0).worker())
            .toList();

    assertThat(chosen.stream().distinct()).hasSize(3);
  }

  @Test
  void skipsDisksThatAreNotHealthyAndWorkersWithoutAny() {
    List<WorkerCandidate> workers =
        List.of(
            worker("w1", 2, disk(0, DiskStatus.FULL), disk(1, DiskStatus.HEALTHY)),
            worker("w2", 1, disk(0, DiskStatus.BROKEN)),
            worker("w3", 1));

    List<PartitionLocation> locations = new RoundRobinPlacement(500).place(request(40, 0), workers);

    assertThat(countBy(locations, l -> l.worker().value() + "/" + l.diskIndex()).keySet())
        .containsExactlyInAnyOrder("w1/1", "w3/0");
  }

  @Test
  void noWorkersIsARetryableErrorThatSaysSo() {
    assertThatThrownBy(() -> new RoundRobinPlacement(500).place(request(1, 0), List.of()))
        .isInstanceOfSatisfying(
            FaroException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.NO_AVAILABLE_WORKERS);
              assertThat(e.retryable()).isTrue();
            })
        .hasMessageContaining("no available workers")
        .hasMessageContaining("app/0");

    List<WorkerCandidate> allBroken = List.of(worker("w1", 1, disk(0, DiskStatus.BROKEN)));
    assertThatThrownBy(() -> new RoundRobinPlacement(500).place(request(1, 0), allBroken))
        .isInstanceOfSatisfying(
            FaroException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.NO_AVAILABLE_WORKERS))
        .hasMessageContaining("healthy disk");
  }
}
