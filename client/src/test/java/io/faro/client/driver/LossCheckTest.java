package io.faro.client.driver;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.PartitionPages;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A loss reported for a generation has the engine forget the shuffle's map outputs, once; a loss
 * reported late, by a reader of a generation that a re-run already replaced, is ignored: the
 * engine's outputs are the new generation's, and forgetting them would run the map stage a third
 * time.
 */
class LossCheckTest {
  private static final int MAPS = 2;

  @Test
  void aLateReportForAReplacedGenerationForgetsNothing() {
    ClientSettings settings =
        ClientSettings.from(FaroConf.of(Map.of("faro.master.endpoints", "127.0.0.1:1")));
    try (ClientPool pool = new ClientPool("loss-check-test", settings.network())) {
      Generations generations =
          new Generations(new AppId("app-loss-check"), new PartitionPages(64));
      // Spark holds every map output until it drops them all.
      generations.engineOutputs(shuffle -> MAPS);
      Committer committer =
          new Committer(
              settings,
              pool,
              new CommitWatch(
                  new MasterClient(
                      pool, List.of(new HostPort("127.0.0.1", 1)), Duration.ofSeconds(1)),
                  Duration.ofSeconds(1),
                  Clock.systemUTC()));
      LossCheck check = new LossCheck(generations, committer);
      List<Integer> forgotten = new ArrayList<>();
      check.onShuffleLost(forgotten::add);

      Generation first = generations.forWriter(0, 1, 0, MAPS, 4);
      for (int m = 0; m < MAPS; m++) {
        first.mapperEnd(m, 0, BatchCounts.of(List.of(m), List.of(1)), false);
      }
      // The engine rolls the stage back and runs it again whole: a new generation.
      Generation second = generations.forWriter(0, 1, 1, MAPS, 4);
      assertThat(second).isNotSameAs(first);
      assertThat(generations.latest(0)).isSameAs(second);

      assertThat(check.reportedLost(first, 3, "a reader of the old stage attempt")).isNull();
      assertThat(forgotten).as("the new generation's outputs are kept").isEmpty();

      assertThat(check.reportedLost(second, 3, "lost for real")).isNull();
      assertThat(check.reportedLost(second, 2, "reported twice")).isNull();
      assertThat(forgotten).as("forgotten once, for the latest generation").containsExactly(0);
    }
  }
}
