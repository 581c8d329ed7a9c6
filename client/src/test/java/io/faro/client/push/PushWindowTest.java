package io.faro.client.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.client.ClientOptions;
import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Responder;
import io.faro.common.network.TransportServer;
import io.faro.common.testing.Eventually;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The in-flight window on real connections: a push port on loopback that holds each frame until the
 * test answers it, with the statuses the test chooses.
 */
class PushWindowTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("window"), 0);

  /** A frame the port received, and how to answer it. */
  private record Received(PushRequest meta, Responder responder) {
    void answer(PushStatusP... statuses) {
      PushResponse.Builder b = PushResponse.newBuilder();
      for (PushStatusP s : statuses) {
        b.addStatuses(s);
      }
      responder.respond(b.build());
    }
  }

  private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
  private ClientOptions.Settings settings;
  private TransportServer port;
  private ClientPool pool;
  private AtomicReferenceArray<PartitionLocation> targets;
  private final List<List<MapPusher.Failed>> revived = new ArrayList<>();

  @BeforeEach
  void start() {
    settings =
        ClientOptions.Settings.from(
            FaroConf.of(
                Map.of(
                    // Every batch of 2 KiB fills its frame: one frame per add.
                    "faro.client.push.merge.size", "1k",
                    "faro.client.push.max.in.flight", "2",
                    "faro.network.request.timeout", "2s")));
    port =
        new TransportServer(
            "test-push",
            "127.0.0.1",
            0,
            "test.port",
            settings.network(),
            (request, responder) ->
                received.add(new Received(request.meta(PushRequest.class), responder)),
            null);
    pool = new ClientPool("test", settings.network());
    WorkerEndpoint endpoint =
        new WorkerEndpoint("127.0.0.1", port.port(), port.port(), port.port());
    targets = new AtomicReferenceArray<>(2);
    for (int p = 0; p < 2; p++) {
      targets.set(p, new PartitionLocation(p, 0, Role.PRIMARY, new WorkerId("w"), endpoint, 0));
    }
  }

  @AfterEach
  void stop() {
    pool.close();
    port.close();
  }

  private Revivals revivals() {
    return new Revivals(
        SHUFFLE,
        0,
        0,
        3,
        failed -> {
          revived.add(failed);
          List<PartitionLocation> moved = new ArrayList<>();
          for (MapPusher.Failed f : failed) {
            PartitionLocation at = targets.get(f.partition());
            moved.add(
                new PartitionLocation(
                    f.partition(), f.epoch() + 1, Role.PRIMARY, at.worker(), at.endpoint(), 0));
          }
          return moved;
        },
        targets);
  }

  private PushWindow window(Revivals revivals) {
    return new PushWindow(
        SHUFFLE, 0, 0, pool, settings, UnpooledByteBufAllocator.DEFAULT, revivals);
  }

  private PushedBatch batch(int partition) {
    return new PushedBatch(
        partition, targets.get(partition), Unpooled.directBuffer(2048).writeZero(2048), 0);
  }

  private Received next() throws InterruptedException {
    Received r = received.poll(10, TimeUnit.SECONDS);
    assertThat(r).as("a frame reached the push port").isNotNull();
    return r;
  }

  @Test
  void noMoreFramesThanTheWindowAreUnansweredAndAnAnswerLetsTheNextOneGo() throws Exception {
    PushWindow window = window(revivals());
    PushedBatch first = batch(0);
    PushedBatch second = batch(1);
    window.add(first);
    window.add(second);
    Received a = next();
    Received b = next();
    assertThat(window.unanswered()).isEqualTo(2);

    // The third frame waits for a permit, on the task's thread.
    PushedBatch third = batch(0);
    CompletableFuture<Void> adding = CompletableFuture.runAsync(() -> window.add(third));
    assertThat(received.poll(300, TimeUnit.MILLISECONDS))
        .as("a third frame while two are unanswered")
        .isNull();
    assertThat(adding).isNotDone();

    a.answer(PushStatusP.OK);
    adding.get(10, TimeUnit.SECONDS);
    Received c = next();
    assertThat(c.meta().getParts(0).getPartitionId()).isEqualTo(0);
    assertThat(c.responder()).isNotSameAs(a.responder());
    b.answer(PushStatusP.SLOW_DOWN);
    c.answer(PushStatusP.OK);
    window.awaitAnswers();

    assertThat(window.unanswered()).isZero();
    assertThat(window.blockedNanos()).as("the time the task waited for the window").isPositive();
    // Acknowledged batches are released once answered.
    assertThat(List.of(first, second, third))
        .allSatisfy(p -> assertThat(p.batch().refCnt()).isZero());
  }

  @Test
  void eachStatusGoesWhereItBelongs() throws Exception {
    Revivals revivals = revivals();
    PushWindow window = window(revivals);
    PushedBatch split = batch(0);
    PushedBatch soft = batch(1);
    window.add(split);
    window.add(soft);
    // The two frames may come on different connections, in either order.
    for (int i = 0; i < 2; i++) {
      Received r = next();
      r.answer(
          r.meta().getParts(0).getPartitionId() == 0 ? PushStatusP.SPLIT : PushStatusP.SOFT_SPLIT);
    }
    window.awaitAnswers();

    // SPLIT: the batch is kept to be pushed again; SOFT_SPLIT: released, its partition moves.
    assertThat(split.batch().refCnt()).isEqualTo(1);
    assertThat(soft.batch().refCnt()).isZero();
    assertThat(revivals.hasRetries()).isTrue();
    List<PushedBatch> again = revivals.revive();
    assertThat(revived).hasSize(1);
    assertThat(revived.get(0))
        .extracting(MapPusher.Failed::partition)
        .containsExactlyInAnyOrder(0, 1);
    assertThat(again)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.batch()).isSameAs(split.batch());
              assertThat(p.attempts()).isEqualTo(1);
              assertThat(p.target().epoch()).isEqualTo(1);
            });
    assertThat(targets.get(1).epoch()).as("the soft split moved partition 1 too").isEqualTo(1);

    // STAGE_ENDED: the shuffle was committed while this attempt pushed: released, and marked.
    window.add(again.get(0));
    next().answer(PushStatusP.STAGE_ENDED);
    window.awaitAnswers();
    assertThat(window.incomplete()).isTrue();
    assertThat(split.batch().refCnt()).isZero();
    assertThat(revivals.isEmpty()).isTrue();
  }

  @Test
  void framesNobodyAnswersAreHandedToTheRevivalsAfterTheRequestTimeoutAndCloseReleasesWhatIsLeft()
      throws Exception {
    Revivals revivals = revivals();
    PushWindow window = window(revivals);
    PushedBatch a = batch(0);
    PushedBatch b = batch(1);
    window.add(a);
    window.add(b);
    next();
    next();
    // Never answered: the pool fails both after faro.network.request.timeout; their batches
    // wait to be pushed again, and the window is free.
    Eventually.await("both frames to time out", window::unanswered, n -> n == 0);
    assertThat(revivals.hasRetries()).isTrue();
    assertThat(List.of(a, b)).allSatisfy(p -> assertThat(p.batch().refCnt()).isEqualTo(1));
    PushedBatch c = batch(0);
    window.add(c);
    next();
    // The task fails: as MapPusher.close does, the window and the revivals let go of everything.
    window.close();
    revivals.releaseAll();
    assertThat(List.of(a, b)).allSatisfy(p -> assertThat(p.batch().refCnt()).isZero());
    // c's frame was sent: its answer (a timeout, later) releases it, as the window is closed.
    Eventually.await("the last batch to be released", () -> c.batch().refCnt(), n -> n == 0);
  }
}
