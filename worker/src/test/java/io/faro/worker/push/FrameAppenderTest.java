package io.faro.worker.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.FrameDecoder;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.TransportServer;
import io.faro.common.testing.Eventually;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionCommit;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.PushStatus;
import io.faro.worker.partition.Reservation;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.replicate.ReplicaLinks;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.Disks;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.WorkerClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary's store and a replica's store on real disk directories, the replica served by a real
 * push port on loopback: what each part of a frame becomes, what is forwarded, and what the frame's
 * memory does.
 */
class FrameAppenderTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-appender"), 3);
  private static final long FLUSH = 4 * 1024;
  private static final long PRIMARY_CHUNK = 16 * 1024;
  // Not the primary's: a replica must cut by its primary's chunk size, which forwards carry.
  private static final long REPLICA_CHUNK = 64 * 1024;

  @TempDir Path root;
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final Batches batches = new Batches(false, 11);
  private ScheduledExecutorService memoryThread;
  private PartitionStore primary;
  private MemoryBudget primaryBudget;
  private FrameAppender appender;
  private PartitionStore replica;
  private HostPort replicaPush;

  @BeforeEach
  void setUp() {
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    NetworkSettings network =
        NetworkSettings.from(FaroConf.empty().with("faro.auth.enabled", "false"));

    replica = store("r", new WriterSettings(FLUSH, REPLICA_CHUNK), null);
    MemoryBudget replicaBudget = budget(1L << 30, replica);
    TransportServer replicaServer =
        new TransportServer(
            "test-replica-push",
            "127.0.0.1",
            0,
            "test.push.port",
            network,
            new PushHandler(new FrameAppender(replica, replicaBudget)),
            replicaBudget::register,
            FrameDecoder.Bodies.COMPOSITE,
            replicaBudget::partialFrames,
            io.faro.common.network.RequestObserver.NONE);
    closing.add(replicaServer);
    replicaPush = new HostPort("127.0.0.1", replicaServer.port());

    ClientPool forwards = new ClientPool("test-forward", network);
    closing.add(forwards);
    primary =
        store(
            "p",
            new WriterSettings(FLUSH, PRIMARY_CHUNK),
            new ReplicaLinks(forwards, Duration.ofSeconds(10)));
    primaryBudget = budget(1L << 30, primary);
    appender = new FrameAppender(primary, primaryBudget);
  }

  @AfterEach
  void tearDown() throws Exception {
    // Last opened, first closed: the primary's store before the forward connections, the replica
    // behind them, each store before its disks.
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    memoryThread.shutdownNow();
    memoryThread.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void partsWithoutAReplicaAreAnsweredAtOnceInFrameOrder() {
    primary.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 0)));
    byte[] a = batch(0, 300);
    byte[] b = batch(1, 200);
    byte[] c = batch(2, 100);

    FrameAppender.Appended appended =
        append(appender, false, 0, part(0, a), part(7, b), part(1, c));

    assertThat(appended.statuses()).as("no replica to wait for").isDone();
    assertThat(appended.statuses().join())
        .containsExactly(PushStatus.OK, PushStatus.NOT_HERE, PushStatus.OK);
    assertThat(appended.slowDown()).isFalse();
    assertThat(primary.counters().appendedBytes()).isEqualTo(a.length + c.length);
    assertThat(primary.counters().forwardedBytes()).isZero();

    primary.commit(SHUFFLE).join();
    assertThat(append(appender, false, 0, part(0, a)).statuses().join())
        .as("after the commit")
        .containsExactly(PushStatus.STAGE_ENDED);
  }

  @Test
  void aPrimaryAnswersOnceItsReplicaConfirmedAndBothCopiesCutTheSameChunks() {
    replica.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    primary.reserve(
        SHUFFLE,
        List.of(new Reservation(0, 0, 0, Optional.of(replicaPush)), new Reservation(1, 0, 0)));
    long forwarded = 0;
    for (int i = 0; i < 20; i++) {
      byte[] part = batch(i, 4000);
      // Partition 1 has no replica: it is appended beside the forwarded part, and not forwarded.
      FrameAppender.Appended appended =
          append(appender, false, 0, part(0, part), part(1, batch(100 + i, 50)));
      assertThat(WorkerClient.await(appended.statuses(), "the replica's answer"))
          .containsExactly(PushStatus.OK, PushStatus.OK);
      forwarded += part.length;
    }
    assertThat(primary.counters().forwardedBytes()).isEqualTo(forwarded);

    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    PartitionCommit.Committed onPrimary = committed(primary, key);
    PartitionCommit.Committed onReplica = committed(replica, key);
    assertThat(onPrimary.chunks().chunkCount())
        .as("80k cut by 16k (by 64k: 2 chunks)")
        .isGreaterThanOrEqualTo(4);
    assertThat(onReplica.chunks()).isEqualTo(onPrimary.chunks());
  }

  @Test
  void aPartItsReplicaDidNotTakeIsAnsweredReplicaFailedAndThePartitionTakesNoMore() {
    // The replica holds partition 1 but not partition 0.
    replica.reserve(SHUFFLE, List.of(new Reservation(1, 0, 0)));
    primary.reserve(
        SHUFFLE,
        List.of(
            new Reservation(0, 0, 0, Optional.of(replicaPush)),
            new Reservation(1, 0, 0, Optional.of(replicaPush))));

    FrameAppender.Appended appended =
        append(appender, false, 0, part(0, batch(0, 500)), part(1, batch(1, 500)));

    assertThat(WorkerClient.await(appended.statuses(), "the replica's answer"))
        .containsExactly(PushStatus.REPLICA_FAILED, PushStatus.OK);
    assertThat(primary.writer(new PartitionKey(SHUFFLE, 0, 0)).orElseThrow().stoppedTakingData())
        .isTrue();
    assertThat(primary.writer(new PartitionKey(SHUFFLE, 1, 0)).orElseThrow().stoppedTakingData())
        .isFalse();
    FrameAppender.Appended later =
        append(appender, false, 0, part(0, batch(2, 500)), part(1, batch(3, 500)));
    assertThat(WorkerClient.await(later.statuses(), "the replica's answer"))
        .as("partition 0 splits away without asking the replica")
        .containsExactly(PushStatus.SPLIT, PushStatus.OK);

    // Every part and every forwarded slice gave its share of the charge back.
    primary.flushBuffered();
    Eventually.await("the frames' memory to be released", primaryBudget::used, used -> used == 0);
  }

  @Test
  void aReplicaThatRefusedAForwardedPartTakesNoMoreForThatPartition() {
    // A hard split threshold of one byte: every partition refuses its second part.
    PartitionStore store = store("s", new WriterSettings(FLUSH, PRIMARY_CHUNK, 1, true), null);
    FrameAppender replicaSide = new FrameAppender(store, budget(1L << 30, store));
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 0)));

    assertThat(append(replicaSide, true, PRIMARY_CHUNK, part(0, batch(0, 100))).statuses().join())
        .containsExactly(PushStatus.OK);
    assertThat(append(replicaSide, true, PRIMARY_CHUNK, part(0, batch(1, 100))).statuses().join())
        .containsExactly(PushStatus.SPLIT);
    assertThat(store.writer(new PartitionKey(SHUFFLE, 0, 0)).orElseThrow().stoppedTakingData())
        .as("a forwarded part refused: a later one would leave a hole")
        .isTrue();

    // The same refusal of a part pushed to it (not forwarded) does not stop the partition.
    append(replicaSide, false, 0, part(1, batch(2, 100)));
    assertThat(append(replicaSide, false, 0, part(1, batch(3, 100))).statuses().join())
        .containsExactly(PushStatus.SPLIT);
    assertThat(store.writer(new PartitionKey(SHUFFLE, 1, 0)).orElseThrow().stoppedTakingData())
        .isFalse();
  }

  @Test
  void aValidForwardedFrameForLocationsHeldHereTakesItsConnectionOutOfPauses() {
    PartitionStore store = store("s", new WriterSettings(FLUSH, PRIMARY_CHUNK), null);
    MemoryBudget budget = budget(64 * 1024, store);
    FrameAppender replicaSide = new FrameAppender(store, budget);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    EmbeddedChannel fromPrimary = new EmbeddedChannel();
    try {
      budget.register(fromPrimary);
      budget.reserve(64 * 1024);
      assertThat(fromPrimary.config().isAutoRead()).as("paused").isFalse();

      append(replicaSide, fromPrimary, false, 0, part(0, batch(0, 100)));
      assertThat(fromPrimary.config().isAutoRead())
          .as("after a frame that is not forwarded")
          .isFalse();
      append(
          replicaSide,
          fromPrimary,
          true,
          PRIMARY_CHUNK,
          part(0, batch(1, 100)),
          part(5, batch(2, 100)));
      assertThat(fromPrimary.config().isAutoRead())
          .as("after a forwarded frame for a location not here")
          .isFalse();
      FrameAppender.Appended appended =
          append(replicaSide, fromPrimary, true, PRIMARY_CHUNK, part(0, batch(3, 100)));
      assertThat(fromPrimary.config().isAutoRead())
          .as("after a forwarded frame for locations held here")
          .isTrue();
      assertThat(appended.slowDown()).as("the budget is still paused").isTrue();
    } finally {
      budget.release(64 * 1024);
      fromPrimary.finishAndReleaseAll();
    }
  }

  @Test
  void theSlowDownFlagIsReadOnceTheFrameIsAppended() {
    byte[] part = batch(0, 3000);
    MemoryBudget budget = budget(part.length, primary);
    FrameAppender small = new FrameAppender(primary, budget);
    primary.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));

    FrameAppender.Appended appended = append(small, false, 0, part(0, part));

    assertThat(appended.slowDown()).as("this frame's own bytes reached the pause mark").isTrue();
    assertThat(appended.statuses().join()).containsExactly(PushStatus.OK);
  }

  @Test
  void aPushByAnotherRegistrationOfTheAppIsRefusedWhereItFindsTheWriters() {
    String holder = "0".repeat(32);
    String other = "1".repeat(32);
    primary.reserve(SHUFFLE, 7, holder, List.of(new Reservation(0, 0, 0)));

    assertThatThrownBy(() -> append(appender, null, other, false, 0, part(0, batch(0, 100))))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        .hasMessageContaining("another registration");
    assertThat(primary.counters().appendedBytes())
        .as("nothing of the refused frame was appended")
        .isZero();
    byte[] own = batch(1, 100);
    assertThat(append(appender, null, holder, false, 0, part(0, own)).statuses().join())
        .containsExactly(PushStatus.OK);
    byte[] member = batch(2, 100);
    assertThat(append(appender, null, "", false, 0, part(0, member)).statuses().join())
        .as("a member's forward proves no registration")
        .containsExactly(PushStatus.OK);
    assertThat(primary.counters().appendedBytes()).isEqualTo(own.length + member.length);
  }

  // ------------------------------------------------------------------ helpers

  private record Part(int partition, byte[] bytes) {}

  private static Part part(int partition, byte[] bytes) {
    return new Part(partition, bytes);
  }

  private byte[] batch(int batchId, int rawLength) {
    return batches.batchBytes(0, 0, batchId, rawLength);
  }

  private static FrameAppender.Appended append(
      FrameAppender appender, boolean forwarded, long chunkSize, Part... parts) {
    return append(appender, null, forwarded, chunkSize, parts);
  }

  private static FrameAppender.Appended append(
      FrameAppender appender,
      EmbeddedChannel from,
      boolean forwarded,
      long chunkSize,
      Part... parts) {
    return append(appender, from, "", forwarded, chunkSize, parts);
  }

  /**
   * Appends one frame of {@code parts}, as forwarded by a primary or pushed by a client (on a
   * connection that proved the app registration {@code appNonce}, "" for none).
   */
  private static FrameAppender.Appended append(
      FrameAppender appender,
      EmbeddedChannel from,
      String appNonce,
      boolean forwarded,
      long chunkSize,
      Part... parts) {
    PushRequest.Builder push =
        PushRequest.newBuilder()
            .setShuffle(WorkerClient.key(SHUFFLE))
            .setReplica(forwarded)
            .setChunkSize(chunkSize);
    List<PartitionKey> keys = new ArrayList<>();
    ByteBuf body = PooledByteBufAllocator.DEFAULT.directBuffer();
    for (Part part : parts) {
      push.addParts(
          PushPart.newBuilder()
              .setPartitionId(part.partition())
              .setEpoch(0)
              .setLength(part.bytes().length));
      keys.add(new PartitionKey(SHUFFLE, part.partition(), 0));
      body.writeBytes(part.bytes());
    }
    try {
      return appender.append(push.build(), keys, body, from, appNonce);
    } finally {
      body.release(); // borrowed: what was appended or forwarded holds slices of its own
    }
  }

  private static PartitionCommit.Committed committed(PartitionStore store, PartitionKey key) {
    CompletableFuture<?> commit = store.commit(key.shuffle());
    WorkerClient.await(commit, "the commit");
    return store.committed(key);
  }

  private PartitionStore store(String name, WriterSettings settings, ReplicaLinks links) {
    Disks disks =
        Disks.open(
            List.of(new DiskDir(root.resolve(name), DiskTier.SSD)),
            Disks.Options.buffered(1),
            name);
    closing.add(disks);
    PartitionStore store =
        links == null
            ? new PartitionStore(disks, settings)
            : new PartitionStore(disks, settings, links::link);
    closing.add(store);
    return store;
  }

  private MemoryBudget budget(long pauseAt, PartitionStore store) {
    return new MemoryBudget(pauseAt, pauseAt / 2, store::flushBuffered, memoryThread);
  }
}
