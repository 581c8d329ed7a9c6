package io.faro.client.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientSettings;
import io.faro.client.MapAttempt;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A map task's memory stays within faro.client.push.buffer.size, whatever the partition count. */
class MapPusherMemoryTest {
  @Test
  void manyPartitionsReachTheLimitThroughTheirArraysNotOnlyTheirBytes() {
    int partitions = 100_000;
    long limit = 1L << 20;
    ClientSettings settings =
        ClientSettings.from(
            FaroConf.of(
                Map.of(
                    "faro.client.push.buffer.size",
                    Long.toString(limit),
                    // Nothing is sent in this test: batches wait in the pusher and are released by
                    // close().
                    "faro.client.push.merge.size",
                    "64m")));
    WorkerEndpoint nowhere = new WorkerEndpoint("127.0.0.1", 1, 1, 1);
    List<PartitionLocation> locations = new ArrayList<>(partitions);
    for (int p = 0; p < partitions; p++) {
      locations.add(new PartitionLocation(p, 0, Role.PRIMARY, new WorkerId("w"), nowhere, 0));
    }
    try (ClientPool pool = new ClientPool("test", settings.network());
        MapPusher pusher =
            new MapPusher(
                new ShuffleId(new AppId("memory"), 0),
                new MapAttempt(0, 0),
                locations,
                partitions,
                pool,
                settings,
                PooledByteBufAllocator.DEFAULT)) {
      byte[] record = new byte[100];
      int written = 0;
      while (!pusher.overBufferLimit()) {
        pusher.write(written++, record, 0, record.length);
      }
      // 100 bytes per partition are far below the limit: the arrays are what reached it.
      assertThat(pusher.totalBuffered()).isLessThan(limit / 2);
      assertThat(written).isLessThanOrEqualTo((int) (limit / 256) + 1);
      pusher.cutAll();
      assertThat(pusher.overBufferLimit()).isFalse();
      assertThat(pusher.totalBuffered()).isZero();
    }
  }
}
