package io.faro.client.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientOptions;
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
import io.faro.proto.RevivePartitionP;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  private record Parts(ClientPool pool, MasterClient master, Placement placement)
      implements AutoCloseable {
    @Override
    public void close() {
      pool.close();
    }
  }

  private static Parts parts(MiniFaroCluster cluster, AppId app) {
    ClientOptions.Settings settings = ClientOptions.Settings.from(cluster.clientConf());
    ClientPool pool = new ClientPool("test", settings.network());
    MasterClient master =
        new MasterClient(
            pool,
            settings.masters(),
            settings.masterRetryTimeout(),
            settings.masterAttemptTimeout());
    master.callBlocking(
        RegisterAppRequest.newBuilder().setAppId(app.value()).build(), EmptyResponse.class);
    return new Parts(pool, master, new Placement(settings, pool, master, Clock.systemUTC()));
  }

  @Test
  void aWorkerThatDoesNotReserveIsReplacedInTheNextRoundUnderANewEpoch() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 3)) {
      AppId app = new AppId("rounds");
      try (Parts p = parts(cluster, app)) {
        // Still alive to the master (no heartbeat timeout yet), but nothing answers its port.
        WorkerId gone = cluster.workers().get(0).workerId();
        cluster.workers().get(0).close();
        Generation g = new Generation(0, new ShuffleId(app, 0), 4, 30);

        List<PartitionLocation> placed =
            Futures.await(p.placement().firstPlacement(g), WAIT, "placement");

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
        assertThat(p.placement().firstPlacement(g).join()).isSameAs(placed);
      }
    }
  }

  @Test
  void placementGivesUpAfterItsRoundsAndTheNextCallerPlacesAgain() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 3)) {
      AppId app = new AppId("give-up");
      try (Parts p = parts(cluster, app)) {
        // Three workers alive to the master, none answering: one partition meets a new one in
        // each round, and each round excludes the ones that failed before.
        cluster.workers().forEach(w -> w.close());
        Generation g = new Generation(0, new ShuffleId(app, 0), 1, 1);

        CompletableFuture<List<PartitionLocation>> first = p.placement().firstPlacement(g);
        assertThatThrownBy(() -> Futures.await(first, WAIT, "placement"))
            .isInstanceOf(FaroException.class)
            .satisfies(
                e -> assertThat(((FaroException) e).code()).isEqualTo(ErrorCode.RESERVE_FAILED))
            .hasMessageContaining(
                "could not reserve 1 partitions of shuffle " + g.id() + " after 3 rounds");
        // A failed placement is not kept: the next request tries again.
        assertThat(p.placement().firstPlacement(g)).isNotSameAs(first);
      }
    }
  }

  @Test
  void revivesOfOnePartitionShareOnePlacementThatAvoidsTheWorkerItLeaves() throws Exception {
    try (MiniFaroCluster cluster = MiniFaroCluster.start(dir, 2)) {
      AppId app = new AppId("revive");
      try (Parts p = parts(cluster, app)) {
        Generation g = new Generation(0, new ShuffleId(app, 0), 1, 2);
        List<PartitionLocation> placed =
            Futures.await(p.placement().firstPlacement(g), WAIT, "placement");
        PartitionLocation before = g.locations().current(1);
        RevivePartitionP revive =
            RevivePartitionP.newBuilder().setPartitionId(1).setEpoch(before.epoch()).build();

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
}
