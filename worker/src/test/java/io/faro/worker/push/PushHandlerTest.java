package io.faro.worker.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.HandlerCalls;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MessageType;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import io.faro.proto.ShuffleKeyP;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.Reservation;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.storage.Disks;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.TestDisks;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The push port's handler over a store on a real disk directory: who may push, what a frame whose
 * parts do not match its body gets (an error answer, and nothing appended), and the status of each
 * part of a good one: appended, not held here, or too late (the shuffle was committed).
 */
class PushHandlerTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-push"), 4);
  private static final ShuffleKeyP KEY =
      ShuffleKeyP.newBuilder().setAppId("app-push").setShuffleId(4).build();
  private static final String NONCE = "a".repeat(32);
  private static final Identity APP = Identity.app(SHUFFLE.app(), NONCE);
  private static final long TOKEN = 5;

  @TempDir Path root;
  private final Batches batches = new Batches(false, 3);
  private Disks disks;
  private PartitionStore store;
  private ScheduledExecutorService memoryThread;
  private PushHandler handler;

  @BeforeEach
  void open() {
    disks = TestDisks.ssds(root, 1);
    store = new PartitionStore(disks, new WriterSettings(4096, 16 * 1024));
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    MemoryBudget budget = new MemoryBudget(1L << 28, 1L << 27, store::flushBuffered, memoryThread);
    handler = new PushHandler(new FrameAppender(store, budget));
    store.reserve(
        SHUFFLE, TOKEN, NONCE, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 0)));
  }

  @AfterEach
  void close() {
    store.close();
    disks.close();
    memoryThread.shutdownNow();
  }

  /** A frame of one batch per partition in {@code partitions}, and its body. */
  private record Frame(PushRequest push, ByteBuf body) {}

  private Frame frame(int... partitions) {
    PushRequest.Builder push = PushRequest.newBuilder().setShuffle(KEY);
    ByteBuf body = Unpooled.buffer();
    int batch = 0;
    for (int partition : partitions) {
      ByteBuf one = batches.batch(0, 0, batch++, 100 + partition);
      push.addParts(
          PushPart.newBuilder()
              .setPartitionId(partition)
              .setEpoch(0)
              .setLength(one.readableBytes()));
      body.writeBytes(one);
      one.release();
    }
    return new Frame(push.build(), body);
  }

  private PushResponse pushed(HandlerCalls from, Frame frame) throws Exception {
    try {
      assertThat(from.send(handler, MessageType.PUSH_REQUEST, frame.push(), frame.body()))
          .isEmpty();
      return from.response(PushResponse.class);
    } finally {
      frame.body().release();
    }
  }

  @Test
  void onlyTheAppsRegistrationPushesAndOnlyTheClusterForwardsToAReplica() throws Exception {
    Frame frame = frame(0);
    try (HandlerCalls otherRegistration =
            new HandlerCalls(Identity.app(SHUFFLE.app(), "b".repeat(32)));
        HandlerCalls anonymous = new HandlerCalls(Identity.ANONYMOUS);
        HandlerCalls app = new HandlerCalls(APP)) {
      for (HandlerCalls stranger : List.of(otherRegistration, anonymous)) {
        assertThat(stranger.send(handler, MessageType.PUSH_REQUEST, frame.push(), frame.body()))
            .isPresent();
      }
      PushRequest forward = frame.push().toBuilder().setReplica(true).build();
      assertThat(app.send(handler, MessageType.PUSH_REQUEST, forward, frame.body()))
          .hasValueSatisfying(why -> assertThat(why).contains("cluster"));
    } finally {
      frame.body().release();
    }
    assertThat(store.counters().appendedBytes()).isZero();
  }

  @Test
  void aFrameWhosePartsDoNotMatchItsBodyIsRefusedAndNothingIsAppended() throws Exception {
    try (HandlerCalls app = new HandlerCalls(APP)) {
      Frame good = frame(0, 1);
      PushRequest longer =
          good.push().toBuilder()
              .setParts(1, good.push().getParts(1).toBuilder().setLength(10_000))
              .build();
      PushRequest empty =
          good.push().toBuilder()
              .addParts(PushPart.newBuilder().setPartitionId(1).setLength(0))
              .build();
      // Two parts cut in the middle of a batch: the body's length matches, the batches do not.
      int first = good.push().getParts(0).getLength();
      PushRequest cut =
          good.push().toBuilder()
              .setParts(0, good.push().getParts(0).toBuilder().setLength(first - 7))
              .setParts(
                  1,
                  good.push().getParts(1).toBuilder()
                      .setLength(good.push().getParts(1).getLength() + 7))
              .build();
      for (PushRequest bad : List.of(longer, empty, cut)) {
        assertThat(app.send(handler, MessageType.PUSH_REQUEST, bad, good.body())).isEmpty();
        ErrorResponse refused = app.error();
        assertThat(refused.getCode()).isEqualTo(ErrorCode.DATA_CORRUPTED.toProto());
        assertThat(refused.getMessage()).contains("nothing appended");
      }
      good.body().release();
      assertThat(store.counters().appendedBytes()).isZero();
    }
  }

  @Test
  void eachPartIsAnsweredAppendedNotHereOrTooLate() throws Exception {
    try (HandlerCalls app = new HandlerCalls(APP)) {
      Frame frame = frame(0, 1);
      long bytes = frame.body().readableBytes();
      assertThat(pushed(app, frame).getStatusesList())
          .containsExactly(PushStatusP.OK, PushStatusP.OK);
      assertThat(store.counters().appendedBytes()).isEqualTo(bytes);

      // Partition 2 was not reserved here.
      assertThat(pushed(app, frame(2)).getStatusesList()).containsExactly(PushStatusP.NOT_HERE);

      store.commit(SHUFFLE, TOKEN).get(10, TimeUnit.SECONDS);
      assertThat(pushed(app, frame(0)).getStatusesList()).containsExactly(PushStatusP.STAGE_ENDED);
      assertThat(store.counters().appendedBytes()).isEqualTo(bytes);
    }
  }
}
