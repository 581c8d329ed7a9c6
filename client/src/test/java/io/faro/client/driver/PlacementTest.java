package io.faro.client.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientSettings;
import io.faro.client.PartitionPages;
import io.faro.client.push.MapPusher;
import io.faro.client.testing.MiniFaroCluster;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.proto.EmptyResponse;
import io.faro.proto.RegisterAppRequest;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Placement rounds against a real master and real workers: a worker the master still counts as
 * alive but that no longer answers is replaced in the next round, under a new epoch; placement
 * gives up after its rounds; concurrent first placements share one; revives of one partition share
 * one placement that avoids the worker it leaves.
 */
class PlacementTest {
  private static final PartitionPages ONE_PAGE = new PartitionPages(16_384);

  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  private record Parts(ClientPool pool, MasterClient master, Placement placement)
      implements AutoCloseable {
    @Override
    public void close() {
      pool.close();
    }
  }

  /** These tests register their app with a raw request and prove nothing. */
  private static final Map<String, String> OPEN = Map.of("faro.auth.enabled", "false");

  private static Parts parts(MiniFaroCluster cluster, AppId app) {
    return parts(cluster, app, null);
  }

  /** With calls to the master retried for {@code retryTimeout} (null: the setting's). */
  private static Parts parts(MiniFaroCluster cluster, AppId app, Duration retryTimeout) {
    ClientSettings settings = ClientSettings.from(cluster.clientConf());
    ClientPool pool = new ClientPool("test", settings.network());
    MasterClient master =
        new MasterClient(
            pool,
            settings.masters(),
            retryTimeout != null ? retryTimeout : settings.masterRetryTimeout(),
            settings.masterAttemptTimeout());
    master.callBlocking(
        RegisterAppRequest.newBuilder().setAppId(app.value()).build(), EmptyResponse.class);
    return new Parts(pool, master, new Placement(settings, pool, master, Clock.systemUTC()));
  }

  @Test
  void aWorkerThatDoesNotReserveIsReplacedInTheNextRoundUnderANewEpoch() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 3, OPEN)) {
      AppId app = new AppId("rounds");
      try (Parts p = parts(cluster, app)) {
        // Still alive to the master (no heartbeat timeout yet), but nothing answers its port.
        WorkerId gone = cluster.workers().get(0).workerId();
        cluster.workers().get(0).close();
        Generation g = new Generation(0, new ShuffleId(app, 0), 4, 30, ONE_PAGE);

        List<PartitionLocation> placed =
            Futures.await(p.placement().placeAll(g), WAIT, "placement");

        assertThat(placed)
            .extracting(PartitionLocation::partition)
            .containsExactlyInAnyOrderElementsOf(IntStream.range(0, 30).boxed().toList());
        assertThat(placed).extracting(PartitionLocation::worker).doesNotContain(gone);
        // Round 1 had epoch 0; the partitions it gave the silent worker moved to a later epoch.
        Set<Integer> epochs =
            placed.stream().map(PartitionLocation::epoch).collect(Collectors.toSet());
        assertThat(epochs).contains(0).anyMatch(e -> e > 0);
        assertThat(g.locations().current()).containsExactlyInAnyOrderElementsOf(placed);
        // The same placement for every later caller.
        CompletableFuture<List<PartitionLocation>> once = g.placement(0);
        assertThat(p.placement().placeAll(g).join()).containsExactlyInAnyOrderElementsOf(placed);
        assertThat(g.placement(0)).isSameAs(once);
      }
    }
  }

  @Test
  void placementGivesUpAfterItsRoundsAndTheNextCallerPlacesAgain() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 3, OPEN)) {
      AppId app = new AppId("give-up");
      try (Parts p = parts(cluster, app)) {
        // Three workers alive to the master, none answering: one partition meets a new one in
        // each round, and each round excludes the ones that failed before.
        cluster.workers().forEach(w -> w.close());
        Generation g = new Generation(0, new ShuffleId(app, 0), 1, 1, ONE_PAGE);

        CompletableFuture<List<PartitionLocation>> first = p.placement().placeAll(g);
        assertThatThrownBy(() -> Futures.await(first, WAIT, "placement"))
            .isInstanceOf(FaroException.class)
            .satisfies(
                e -> assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.RESERVE_FAILED))
            .hasMessageContaining(
                "could not reserve 1 partitions of shuffle " + g.id() + " after 3 rounds");
        // A failed placement is not kept: the next request tries again.
        CompletableFuture<List<PartitionLocation>> failed = g.placement(0);
        p.placement().placeAll(g);
        assertThat(g.placement(0)).isNotSameAs(failed);
      }
    }
  }

  @Test
  void aShuffleNoWorkerHasRoomForFailsAtOnceNamingTheLimitAndItsKey() throws Exception {
    Map<String, String> small =
        Map.of("faro.auth.enabled", "false", "faro.worker.max.partitions", "100");
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 1, small)) {
      AppId app = new AppId("full");
      // Calls to the master retried far longer than the wait below: a placement that kept asking
      // for slots after the only worker refused would not end within it.
      try (Parts p = parts(cluster, app, Duration.ofMinutes(10))) {
        Generation first = new Generation(0, new ShuffleId(app, 0), 1, 80, ONE_PAGE);
        Futures.await(p.placement().placeAll(first), WAIT, "placement of the first shuffle");
        Generation second = new Generation(0, new ShuffleId(app, 1), 1, 80, ONE_PAGE);

        CompletableFuture<List<PartitionLocation>> refused = p.placement().placeAll(second);
        assertThatThrownBy(() -> Futures.await(refused, WAIT, "placement of the second shuffle"))
            .isInstanceOf(FaroException.class)
            .satisfies(
                e -> assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED))
            .hasMessageContaining("shuffle " + second.id() + " does not fit")
            .hasMessageContaining(
                "this worker holds 80 of at most 100 (faro.worker.max.partitions)")
            .hasMessageContaining("besides the 1 the request leaves out");
        // The first shuffle keeps its locations; the refused one holds none.
        assertThat(first.locations().current()).hasSize(80);
        assertThat(second.locations().all()).isEmpty();
      }
    }
  }

  @Test
  void revivesOfOnePartitionShareOnePlacementThatAvoidsTheWorkerItLeaves() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2, OPEN)) {
      AppId app = new AppId("revive");
      try (Parts p = parts(cluster, app)) {
        Generation g = new Generation(0, new ShuffleId(app, 0), 1, 2, ONE_PAGE);
        List<PartitionLocation> placed =
            Futures.await(p.placement().placeAll(g), WAIT, "placement");
        PartitionLocation before = g.locations().current(1);
        MapPusher.Failed revive = new MapPusher.Failed(1, before.epoch(), Optional.empty());

        // Two tasks ask at once: one placement, one new location for both.
        CompletableFuture<List<PartitionLocation>> a = p.placement().revive(g, List.of(revive));
        CompletableFuture<List<PartitionLocation>> b = p.placement().revive(g, List.of(revive));
        PartitionLocation moved = Futures.await(a, WAIT, "revive").get(0);
        assertThat(Futures.await(b, WAIT, "revive").get(0)).isEqualTo(moved);
        assertThat(moved.epoch()).isGreaterThan(before.epoch());
        assertThat(moved.worker())
            .as("the worker the partition leaves is avoided")
            .isNotEqualTo(before.worker());
        assertThat(g.locations().current(1)).isEqualTo(moved);
        assertThat(g.locations().all()).hasSize(placed.size() + 1);

        // A task that failed on the old epoch later gets the current location, no new placement.
        assertThat(Futures.await(p.placement().revive(g, List.of(revive)), WAIT, "revive"))
            .containsExactly(moved);
        assertThat(g.locations().all()).hasSize(placed.size() + 1);

        List<Integer> partitionsOfOther = new ArrayList<>();
        g.locations().current().forEach(l -> partitionsOfOther.add(l.partition()));
        assertThat(partitionsOfOther).containsExactlyInAnyOrder(0, 1);
      }
    }
  }

  @Test
  void aWideShuffleIsPlacedOnlyWhereItIsAskedForAPageAtATime() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2, OPEN)) {
      AppId app = new AppId("pages");
      try (Parts p = parts(cluster, app)) {
        // 30 partitions in pages of 8: 0..7, 8..15, 16..23, 24..29.
        Generation g = new Generation(0, new ShuffleId(app, 0), 1, 30, new PartitionPages(8));

        // An exclusive end on a page boundary: page 1 only.
        Futures.await(p.placement().place(g, 8, 16), WAIT, "placement");
        assertThat(g.placement(2)).isNull();
        Futures.await(p.placement().place(g, 9, 10), WAIT, "placement");
        assertThat(g.locations().current())
            .extracting(PartitionLocation::partition)
            .containsExactlyInAnyOrderElementsOf(IntStream.range(8, 16).boxed().toList());
        assertThat(g.placement(0)).isNull();
        assertThat(g.placement(2)).isNull();

        // A range across two pages places the one missing, and shares the one placed.
        CompletableFuture<List<PartitionLocation>> page1 = g.placement(1);
        Futures.await(p.placement().place(g, 12, 20), WAIT, "placement");
        assertThat(g.placement(1)).isSameAs(page1);
        assertThat(g.locations().current())
            .extracting(PartitionLocation::partition)
            .containsExactlyInAnyOrderElementsOf(IntStream.range(8, 24).boxed().toList());
        assertThat(g.locations().current(16, 24)).hasSize(8);

        // The last, shorter page; then nothing past the end.
        Futures.await(p.placement().place(g, 29, 40), WAIT, "placement");
        assertThat(g.locations().current(24, 30)).hasSize(6);
        assertThat(g.locations().all()).hasSize(22);
      }
    }
  }
}
