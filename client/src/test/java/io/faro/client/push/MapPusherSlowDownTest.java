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
import io.faro.common.network.TransportServer;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * A map task whose worker answers every push SLOW_DOWN: the task finishes, each batch reached the
 * worker once (none was pushed again, no partition moved), and the pusher counts the answers.
 */
class MapPusherSlowDownTest {
  private static final int PARTITIONS = 4;

  @Test
  void aWorkerThatAlwaysAsksToSlowDownSlowsTheTaskButNeverFailsOrMovesIt() {
    ClientSettings settings =
        ClientSettings.from(
            FaroConf.of(
                Map.of(
                    "faro.client.push.batch.size", "1k",
                    // One batch per frame: every frame is answered SLOW_DOWN.
                    "faro.client.push.merge.size", "1k",
                    "faro.client.push.max.in.flight", "4",
                    "faro.network.request.timeout", "10s",
                    // The fake worker asks no proof (authentication is tested elsewhere).
                    "faro.auth.enabled", "false")));
    AtomicInteger frames = new AtomicInteger();
    AtomicIntegerArray batchesReceived = new AtomicIntegerArray(PARTITIONS);
    try (TransportServer port =
            new TransportServer(
                "test-push",
                "127.0.0.1",
                0,
                "test.port",
                settings.network(),
                (request, responder) -> {
                  PushRequest meta = request.meta(PushRequest.class);
                  frames.incrementAndGet();
                  PushResponse.Builder answer = PushResponse.newBuilder();
                  for (PushPart part : meta.getPartsList()) {
                    batchesReceived.incrementAndGet(part.getPartitionId());
                    answer.addStatuses(PushStatusP.SLOW_DOWN);
                  }
                  responder.respond(answer.build());
                },
                null);
        ClientPool pool = new ClientPool("test", settings.network())) {
      WorkerEndpoint endpoint =
          new WorkerEndpoint("127.0.0.1", port.port(), port.port(), port.port());
      List<PartitionLocation> locations = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        locations.add(new PartitionLocation(p, 0, Role.PRIMARY, new WorkerId("w"), endpoint, 0));
      }
      int[] batchCounts;
      // This pusher cannot move a partition: a revive would fail the task.
      try (MapPusher pusher =
          new MapPusher(
              new ShuffleId(new AppId("slow"), 0),
              new MapAttempt(0, 0),
              locations,
              PARTITIONS,
              pool,
              settings,
              UnpooledByteBufAllocator.DEFAULT)) {
        byte[] record = new byte[700];
        for (int i = 0; i < 200; i++) {
          int partition = i % PARTITIONS;
          pusher.write(partition, record, 0, record.length);
          if (pusher.buffered(partition) >= pusher.batchSize()) {
            pusher.cut(partition);
          }
        }
        pusher.finish();
        batchCounts = pusher.batchCounts();

        assertThat(pusher.revives()).isZero();
        assertThat(pusher.incomplete()).isFalse();
        assertThat(pusher.slowDowns())
            .as("every frame was answered SLOW_DOWN")
            .isEqualTo(frames.get());
        assertThat(pusher.blockedNanos()).isGreaterThanOrEqualTo(pusher.backOffNanos());
      }
      int[] received = new int[PARTITIONS];
      for (int p = 0; p < PARTITIONS; p++) {
        received[p] = batchesReceived.get(p);
      }
      assertThat(received).as("each batch pushed once").containsExactly(batchCounts);
      assertThat(batchCounts).as("two records a batch").containsOnly(25);
    }
  }
}
