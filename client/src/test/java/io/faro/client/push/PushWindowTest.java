package io.faro.client.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientSettings;
import io.faro.client.MapAttempt;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
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
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The in-flight window on real connections: push ports on loopback (one per worker) that hold each
 * frame until the test answers it, with the statuses the test chooses.
 */
class PushWindowTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("window"), 0);
  private static final WorkerId W = new WorkerId("w");
  private static final WorkerId V = new WorkerId("v");

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

  /** Frames that reached worker w's port (partitions 0 and 1). */
  private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();

  /** Frames that reached worker v's port (partitions 2 and 3). */
  private final BlockingQueue<Received> receivedByV = new LinkedBlockingQueue<>();

  private ClientSettings settings;
  private TransportServer port;
  private TransportServer portV;
  private ClientPool pool;
  private Targets targets;
  private final List<List<MapPusher.Failed>> revived = new ArrayList<>();

  @BeforeEach
  void start() {
    settings = settings(2);
    port = port(received);
    portV = port(receivedByV);
    pool = new ClientPool("test", settings.network());
    List<PartitionLocation> locations = new ArrayList<>();
    for (int p = 0; p < 4; p++) {
      TransportServer at = p < 2 ? port : portV;
      WorkerEndpoint endpoint = new WorkerEndpoint("127.0.0.1", at.port(), at.port(), at.port());
      locations.add(new PartitionLocation(p, 0, Role.PRIMARY, p < 2 ? W : V, endpoint, 0));
    }
    targets = Targets.of(SHUFFLE, locations, 4);
  }

  @AfterEach
  void stop() {
    pool.close();
    port.close();
    portV.close();
  }

  private static ClientSettings settings(int maxInFlight) {
    return ClientSettings.from(
        FaroConf.of(
            Map.of(
                // Every batch of 2 KiB fills its frame: one frame per add.
                "faro.client.push.merge.size", "1k",
                "faro.client.push.max.in.flight", Integer.toString(maxInFlight),
                "faro.network.request.timeout", "2s",
                // The fake worker asks no proof (authentication is tested elsewhere).
                "faro.auth.enabled", "false")));
  }

  private TransportServer port(BlockingQueue<Received> frames) {
    return new TransportServer(
        "test-push",
        "127.0.0.1",
        0,
        "test.port",
        settings.network(),
        (request, responder) ->
            frames.add(new Received(request.meta(PushRequest.class), responder)),
        null);
  }

  private Revivals revivals() {
    return new Revivals(
        SHUFFLE,
        new MapAttempt(0, 0),
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
    return window(revivals, settings);
  }

  private PushWindow window(Revivals revivals, ClientSettings settings) {
    return new PushWindow(
        SHUFFLE, new MapAttempt(0, 0), pool, settings, UnpooledByteBufAllocator.DEFAULT, revivals);
  }

  private PushedBatch batch(int partition) {
    return new PushedBatch(
        partition, targets.get(partition), Unpooled.directBuffer(2048).writeZero(2048), 0);
  }

  private Received next() throws InterruptedException {
    return next(received);
  }

  private static Received next(BlockingQueue<Received> frames) throws InterruptedException {
    Received r = frames.poll(10, TimeUnit.SECONDS);
    assertThat(r).as("a frame reached the push port").isNotNull();
    return r;
  }

  /** Adds {@code count} batches of {@code partition}: a frame each. */
  private List<PushedBatch> add(PushWindow window, int partition, int count) {
    List<PushedBatch> added = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      PushedBatch b = batch(partition);
      window.add(b);
      added.add(b);
    }
    return added;
  }

  /** Takes {@code count} frames that reached a port. */
  private static List<Received> next(BlockingQueue<Received> frames, int count)
      throws InterruptedException {
    List<Received> got = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      got.add(next(frames));
    }
    return got;
  }

  /**
   * Adds {@code batch} on a thread of its own (the task's, for the window) and returns once that
   * thread waits for room.
   */
  private static CompletableFuture<Void> addWaiting(PushWindow window, PushedBatch batch) {
    CompletableFuture<Void> adding = new CompletableFuture<>();
    Thread task =
        new Thread(
            () -> {
              try {
                window.add(batch);
                adding.complete(null);
              } catch (Throwable t) {
                adding.completeExceptionally(t);
              }
            },
            "map-task");
    task.start();
    Eventually.await(
        "the task to wait for room or be done",
        () -> adding.isDone() || task.getState() == Thread.State.TIMED_WAITING);
    assertThat(adding).as("the task waits for room").isNotDone();
    return adding;
  }

  /** Asserts that no frame comes to {@code frames} (while the task waits for room). */
  private static void assertNoFrame(BlockingQueue<Received> frames) throws InterruptedException {
    assertThat(frames.poll(100, TimeUnit.MILLISECONDS))
        .as("a frame beyond the worker's window")
        .isNull();
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
  void aFullWorkerIsNamedToTheReviveAndItsLimitEndsTheTaskWhenEveryAttemptMetIt() throws Exception {
    Revivals revivals = revivals();
    PushWindow window = window(revivals);
    PushedBatch first = batch(0);
    window.add(first);
    // The first push and three more (faro.client.push.revive.max.attempts is 3 here), each
    // answered WORKER_FULL.
    PushedBatch pushed = first;
    for (int attempt = 0; attempt < 4; attempt++) {
      next().answer(PushStatusP.WORKER_FULL);
      window.awaitAnswers();
      if (attempt == 3) {
        break;
      }
      List<PushedBatch> again = revivals.revive();
      assertThat(revived.get(attempt))
          .singleElement()
          .satisfies(
              f -> {
                assertThat(f.partition()).isZero();
                assertThat(f.worker()).as("the full worker is left out").contains(W);
              });
      pushed = again.get(0);
      window.add(pushed);
    }
    assertThatThrownBy(revivals::revive)
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED))
        .hasMessageContaining("answered WORKER_FULL")
        .hasMessageContaining("faro.worker.max.written.partitions")
        .hasMessageContaining("pushed 4 times");
    assertThat(first.batch().refCnt()).as("released when the task fails").isZero();
  }

  @Test
  void aPartThatItsReplicaDidNotConfirmNamesTheReplicasWorkerToTheRevive() throws Exception {
    PartitionLocation primary = targets.get(0);
    targets.accumulateAndGet(
        0,
        primary.withReplica(
            new PartitionLocation(0, primary.epoch(), Role.REPLICA, V, primary.endpoint(), 0)),
        (old, next) -> next);
    Revivals revivals = revivals();
    PushWindow window = window(revivals);
    PushedBatch b = batch(0);
    window.add(b);
    next().answer(PushStatusP.REPLICA_FAILED);
    window.awaitAnswers();
    assertThat(b.batch().refCnt()).as("kept to be pushed again").isEqualTo(1);
    revivals.revive().forEach(p -> p.batch().release());
    assertThat(revived)
        .singleElement()
        .satisfies(
            f ->
                assertThat(f)
                    .singleElement()
                    .extracting(MapPusher.Failed::worker)
                    .isEqualTo(Optional.of(V)));
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

  @Test
  void aSlowDownHalvesTheWindowOfThatWorkerOnlyAndItsBatchIsKeptNotRevived() throws Exception {
    Revivals revivals = revivals();
    PushWindow window = window(revivals, settings(4));
    List<PushedBatch> batches = add(window, 0, 4);
    List<Received> frames = next(received, 4);
    assertThat(window.unanswered(W)).isEqualTo(4);

    frames.get(0).answer(PushStatusP.SLOW_DOWN);
    Eventually.await("the SLOW_DOWN answer", () -> window.unanswered(W), n -> n == 3);
    assertThat(window.window(W)).isEqualTo(2);
    assertThat(window.slowDowns()).isEqualTo(1);
    // The worker kept the batch: released at once, like an OK one. (Frames sent while the
    // connection opens may reach the port in any order: which batch it was is not known.)
    assertThat(batches).filteredOn(p -> p.batch().refCnt() == 0).hasSize(1);

    // Frames sent before the window halved tell of the same overload: counted, not halved again.
    frames.get(1).answer(PushStatusP.SLOW_DOWN);
    frames.get(2).answer(PushStatusP.OK);
    frames.get(3).answer(PushStatusP.OK);
    window.awaitAnswers();
    assertThat(window.window(W)).isEqualTo(2);
    assertThat(window.slowDowns()).isEqualTo(2);
    assertThat(batches).allSatisfy(p -> assertThat(p.batch().refCnt()).isZero());
    assertThat(revivals.isEmpty()).as("nothing to push again, no partition to move").isTrue();
    assertThat(revivals.revived()).isZero();
    assertThat(revived).isEmpty();

    // Another worker still gets the whole window (the global bound).
    List<PushedBatch> toV = add(window, 2, 4);
    List<Received> framesOfV = next(receivedByV, 4);
    assertThat(window.unanswered(V)).isEqualTo(4);
    assertThat(window.window(V)).isEqualTo(4);
    framesOfV.forEach(r -> r.answer(PushStatusP.OK));
    window.awaitAnswers();
    assertThat(toV).allSatisfy(p -> assertThat(p.batch().refCnt()).isZero());

    // The slowed worker gets two frames; the third waits for an answer, on the task's thread.
    long backOffBefore = window.backOffNanos();
    List<PushedBatch> toW = add(window, 1, 2);
    List<Received> framesOfW = next(received, 2);
    PushedBatch third = batch(1);
    CompletableFuture<Void> adding = addWaiting(window, third);
    long waitingSince = System.nanoTime();
    assertNoFrame(received);
    assertThat(window.unanswered(W)).isEqualTo(2);
    assertThat(window.unanswered()).isEqualTo(2);

    long answeredAt = System.nanoTime();
    framesOfW.get(0).answer(PushStatusP.OK);
    adding.get(10, TimeUnit.SECONDS);
    Received last = next(received);
    assertThat(window.backOffNanos() - backOffBefore)
        .as("the time the third frame waited for the worker's window")
        .isGreaterThanOrEqualTo(answeredAt - waitingSince);
    assertThat(window.blockedNanos()).isGreaterThanOrEqualTo(window.backOffNanos());
    framesOfW.get(1).answer(PushStatusP.OK);
    last.answer(PushStatusP.OK);
    window.awaitAnswers();
    assertThat(toW).allSatisfy(p -> assertThat(p.batch().refCnt()).isZero());
    assertThat(third.batch().refCnt()).isZero();
    assertThat(window.unanswered()).isZero();
    assertThat(revivals.revived()).isZero();
  }

  @Test
  void repeatedSlowDownsBringTheWindowToOneFrameNeverNoneAndAnswersThatKeepUpGrowItBack()
      throws Exception {
    Revivals revivals = revivals();
    PushWindow window = window(revivals, settings(4));
    // Each frame leaves after the window last halved: each SLOW_DOWN halves it, down to one.
    List<Integer> windows = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      window.add(batch(0));
      next().answer(PushStatusP.SLOW_DOWN);
      window.awaitAnswers();
      windows.add(window.window(W));
    }
    assertThat(windows).containsExactly(2, 1, 1, 1);
    assertThat(window.slowDowns()).isEqualTo(4);

    // One frame still goes; the next waits for its answer, SLOW_DOWN or not.
    window.add(batch(0));
    Received first = next();
    PushedBatch second = batch(0);
    CompletableFuture<Void> adding = addWaiting(window, second);
    assertNoFrame(received);
    first.answer(PushStatusP.SLOW_DOWN);
    adding.get(10, TimeUnit.SECONDS);
    next().answer(PushStatusP.SLOW_DOWN);
    window.awaitAnswers();
    assertThat(window.window(W)).isEqualTo(1);
    assertThat(second.batch().refCnt()).isZero();

    // Answers without a SLOW_DOWN grow it by one frame per window's worth of them, up to the
    // bound; a split counts as keeping up (the worker read the frame).
    windows.clear();
    for (int i = 0; i < 8; i++) {
      window.add(batch(0));
      next().answer(i == 3 ? PushStatusP.SPLIT : PushStatusP.OK);
      window.awaitAnswers();
      windows.add(window.window(W));
    }
    assertThat(windows).containsExactly(2, 2, 3, 3, 3, 4, 4, 4);
    assertThat(window.slowDowns()).isEqualTo(6);
    assertThat(window.window(V)).as("v never asked to slow down").isEqualTo(4);

    // Grown back: four frames to w at once again.
    add(window, 0, 4);
    List<Received> frames = next(received, 4);
    assertThat(window.unanswered(W)).isEqualTo(4);
    frames.forEach(r -> r.answer(PushStatusP.OK));
    window.awaitAnswers();
    // Only the split batch waits to be pushed again; no SLOW_DOWN batch ever does.
    assertThat(revivals.revive()).singleElement().satisfies(p -> p.batch().release());
    assertThat(revived).singleElement().satisfies(f -> assertThat(f).hasSize(1));
  }
}
