package io.faro.worker.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.storage.Disks;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.TestDisks;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store's commit, its record, the lookups of committed locations, expiry and the counts over
 * every location ({@link ShuffleCommitter}, {@link ShuffleExpiry}, {@link StoreCensus}), on two
 * real disk directories with real batches, and a commit log that records what it is told.
 */
class PartitionStoreTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-store"), 5);
  private static final long TOKEN = 77;

  @TempDir Path root;
  private Disks disks;
  private ScheduledExecutorService memoryThread;
  private MemoryBudget budget;
  private PartitionStore store;
  private final RecordingLog log = new RecordingLog();
  private final Batches batches = new Batches(false, 3);

  /** Records each call, and whether the commit it records was answered yet. */
  private static final class RecordingLog implements CommitLog {
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    volatile CompletableFuture<ShuffleCommit> watched;

    @Override
    public void committed(ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit c) {
      boolean answered = watched != null && watched.isDone();
      calls.add(
          "committed "
              + shuffle
              + " token "
              + ownerToken
              + " locations "
              + c.locations()
              + (answered ? " after the answer" : " before the answer"));
    }

    @Override
    public void sealed(ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit s) {
      calls.add("sealed " + shuffle);
    }

    @Override
    public void forgotten(ShuffleId shuffle) {
      calls.add("forgotten " + shuffle);
    }
  }

  @BeforeEach
  void open() {
    disks = TestDisks.ssds(root, 2);
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    budget = new MemoryBudget(1L << 30, 1L << 29, () -> store.flushBuffered(), memoryThread);
    store = new PartitionStore(disks, new WriterSettings(4096, 16 * 1024));
    store.recordCommitsIn(log);
  }

  @AfterEach
  void close() throws InterruptedException {
    store.close();
    disks.close();
    memoryThread.shutdownNow();
    memoryThread.awaitTermination(5, TimeUnit.SECONDS);
  }

  private static PartitionKey key(int partition) {
    return new PartitionKey(SHUFFLE, partition, 0);
  }

  private PushStatus push(int partition, int batchId, int bytes) {
    ByteBuf part = batches.batch(partition, 0, batchId, bytes);
    return store.append(key(partition), part, new FrameCharge(budget, part.readableBytes(), 1));
  }

  private static FaroException refused(Runnable call) {
    return catchThrowableOfType(FaroException.class, call::run);
  }

  /** Partitions 0 and 1 on disk 0 and 1, each pushed twice; partition 2 reserved, never pushed. */
  private void reserveAndPush() {
    store.reserve(
        SHUFFLE,
        TOKEN,
        List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 1), new Reservation(2, 0, 0)));
    for (int batch = 0; batch < 2; batch++) {
      assertThat(push(0, batch, 10_000)).isEqualTo(PushStatus.OK);
      assertThat(push(1, batch, 3_000)).isEqualTo(PushStatus.OK);
    }
  }

  @Test
  void aCommitIsRecordedBeforeItIsAnsweredAndAnsweredOnce() {
    reserveAndPush();
    FaroException stray = refused(() -> store.commit(SHUFFLE, TOKEN + 1));
    assertThat(stray.code()).isEqualTo(ErrorCode.NOT_OWNER);
    assertThat(store.summaries())
        .singleElement()
        .satisfies(s -> assertThat(s.committing()).isFalse());

    CompletableFuture<ShuffleCommit> commit = store.commit(SHUFFLE, TOKEN);
    log.watched = commit;
    ShuffleCommit done = commit.orTimeout(10, TimeUnit.SECONDS).join();
    assertThat(store.commit(SHUFFLE, TOKEN)).isSameAs(commit);
    assertThat(done.failed()).isEmpty();
    assertThat(done.locations()).isEqualTo(3);
    assertThat(done.committed()).extracting(c -> c.key().partition()).containsExactly(0, 1);
    assertThat(done.empty().contains(2, 0)).as("reserved, never pushed").isTrue();
    assertThat(log.calls)
        .containsExactly(
            "committed " + SHUFFLE + " token " + TOKEN + " locations 3 before the answer");
    // Later pushes belong to a losing attempt.
    assertThat(push(0, 2, 100)).isEqualTo(PushStatus.STAGE_ENDED);
  }

  @Test
  void aLocationIsServedOnlyOnceItsCommitCompleted() {
    reserveAndPush();
    FaroException early = refused(() -> store.committed(key(0)));
    assertThat(early.code()).isEqualTo(ErrorCode.SHUFFLE_NOT_COMMITTED);
    assertThat(early.getMessage()).contains("is not committed yet").contains("still takes pushes");
    FaroException unknown = refused(() -> store.committed(key(9)));
    assertThat(unknown.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION);
    assertThat(refused(() -> store.disk(key(9))).code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION);

    store.commit(SHUFFLE, TOKEN).orTimeout(10, TimeUnit.SECONDS).join();
    PartitionCommit.Committed zero = store.committed(key(0));
    PartitionCommit.Committed one = store.committed(key(1));
    PartitionCommit.Committed empty = store.committed(key(2));
    assertThat(zero.chunks().dataLength()).isGreaterThan(one.chunks().dataLength()).isPositive();
    assertThat(zero.file()).isPresent();
    assertThat(empty.file()).isEmpty();
    assertThat(empty.chunks().chunkCount()).isZero();
    assertThat(store.disk(key(0)).index()).isZero();
    assertThat(store.disk(key(1)).index()).isEqualTo(1);
  }

  @Test
  void theCountsSeeEveryLocationHeld() {
    reserveAndPush();
    Map<ShuffleId, Long> bytes = store.bytesByShuffle();
    assertThat(bytes).containsOnlyKeys(SHUFFLE);
    long pushed = bytes.get(SHUFFLE);
    assertThat(pushed).isGreaterThan(2 * 13_000);
    assertThat(store.openPartitionsByDisk()).containsExactly(2, 1);
    // Location 2 received nothing: it is idle, with no file to finish.
    assertThat(store.unfinishedLocations()).isEqualTo(2);
    assertThat(store.summaries())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.id()).isEqualTo(SHUFFLE);
              assertThat(s.locations()).isEqualTo(3);
              assertThat(s.openLocations()).isEqualTo(3);
              assertThat(s.restoredLocations()).isZero();
            });

    store.commit(SHUFFLE, TOKEN).orTimeout(10, TimeUnit.SECONDS).join();
    assertThat(store.openPartitionsByDisk()).containsExactly(0, 0);
    assertThat(store.unfinishedLocations()).isZero();
    assertThat(store.bytesByShuffle()).containsEntry(SHUFFLE, pushed);
    assertThat(store.summaries())
        .singleElement()
        .satisfies(s -> assertThat(s.committing()).isTrue());
  }

  @Test
  void anExpiredShuffleLeavesNoFileNoRecordAndNoLocation() throws IOException {
    reserveAndPush();
    store.commit(SHUFFLE, TOKEN).orTimeout(10, TimeUnit.SECONDS).join();
    Path file = store.committed(key(0)).file().orElseThrow();
    assertThat(file).exists();
    assertThat(store.heldLocations()).isEqualTo(3);

    store.expire(SHUFFLE).orTimeout(10, TimeUnit.SECONDS).join();
    assertThat(file).doesNotExist();
    assertThat(file.getParent()).doesNotExist();
    assertThat(store.shuffles()).isEmpty();
    assertThat(store.heldLocations()).isZero();
    assertThat(store.bytesByShuffle()).isEmpty();
    Eventually.await("the expiry's record", () -> log.calls.contains("forgotten " + SHUFFLE));
    assertThat(push(0, 3, 100)).isEqualTo(PushStatus.NOT_HERE);
    assertThat(refused(() -> store.committed(key(0))).code())
        .isEqualTo(ErrorCode.UNKNOWN_PARTITION);
    try (var left = Files.walk(root)) {
      assertThat(left.filter(Files::isRegularFile).map(Path::getFileName).map(Path::toString))
          .noneMatch(name -> name.endsWith(".data"));
    }
  }

  @Test
  void aWideShufflesExpiryQueuesOneTaskPerDiskThreadNotOnePerLocation() throws Exception {
    int locations = 2_000;
    List<Reservation> wide = new ArrayList<>();
    for (int p = 0; p < locations; p++) {
      wide.add(new Reservation(p, 0, p % 2));
    }
    store.reserve(SHUFFLE, TOKEN, wide);
    for (int p = 0; p < locations; p++) {
      assertThat(push(p, 0, 200)).isEqualTo(PushStatus.OK);
    }
    store.commit(SHUFFLE, TOKEN).orTimeout(30, TimeUnit.SECONDS).join();
    try (var files = Files.walk(root)) {
      assertThat(files.filter(f -> f.toString().endsWith(".data")).count()).isEqualTo(locations);
    }
    assertThat(disks.get(0).usedBytes() + disks.get(1).usedBytes()).isPositive();

    // Each disk's one flusher thread is held, so what the expiry queues stays in the queues.
    CountDownLatch held = holdFlushers();
    CompletableFuture<Void> expired = store.expire(SHUFFLE);
    // Disk 0's thread also records the expiry in the commit log.
    assertThat(disks.get(0).flusher().queuedTasks()).isEqualTo(2);
    assertThat(disks.get(1).flusher().queuedTasks()).isEqualTo(1);
    held.countDown();

    expired.orTimeout(30, TimeUnit.SECONDS).join();
    try (var left = Files.walk(root)) {
      assertThat(left.filter(Files::isRegularFile).map(Path::toString))
          .noneMatch(name -> name.endsWith(".data"));
    }
    assertThat(disks.get(0).usedBytes()).isZero();
    assertThat(disks.get(1).usedBytes()).isZero();
    assertThat(store.heldLocations()).isZero();
    Eventually.await("the expiry's record", () -> log.calls.contains("forgotten " + SHUFFLE));
  }

  /** Holds every flusher thread of both disks until the latch opens; returns that latch. */
  private CountDownLatch holdFlushers() throws InterruptedException {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(2);
    for (int d = 0; d < 2; d++) {
      disks
          .get(d)
          .flusher()
          .anyThread()
          .execute(
              () -> {
                running.countDown();
                try {
                  held.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
    }
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    return held;
  }

  @Test
  void locationsThatReceiveNothingAreCommittedEmptyWithoutATaskEach() throws Exception {
    int locations = 10_000;
    List<Reservation> wide = new ArrayList<>();
    for (int p = 0; p < locations; p++) {
      wide.add(new Reservation(p, 0, p % 2));
    }
    store.reserve(SHUFFLE, TOKEN, wide);
    assertThat(store.heldLocations()).isEqualTo(locations);
    assertThat(store.openPartitionsByDisk()).containsExactly(locations / 2, locations / 2);
    // Three receive a part: 0 and 2 on disk 0, 1 on disk 1.
    for (int p = 0; p < 3; p++) {
      assertThat(push(p, 0, 500)).isEqualTo(PushStatus.OK);
    }
    assertThat(store.openPartitionsByDisk()).containsExactly(locations / 2, locations / 2);
    assertThat(store.summaries())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.locations()).isEqualTo(locations);
              assertThat(s.openLocations()).isEqualTo(locations);
            });

    CountDownLatch held = holdFlushers();
    CompletableFuture<ShuffleCommit> commit = store.commit(SHUFFLE, TOKEN);
    // One task per location that received a part; none for the 9,997 idle ones.
    assertThat(disks.get(0).flusher().queuedTasks()).isEqualTo(2);
    assertThat(disks.get(1).flusher().queuedTasks()).isEqualTo(1);
    held.countDown();
    ShuffleCommit done = commit.orTimeout(30, TimeUnit.SECONDS).join();

    assertThat(done.failed()).isEmpty();
    assertThat(done.locations()).isEqualTo(locations);
    assertThat(done.committed()).extracting(c -> c.key().partition()).containsExactly(0, 1, 2);
    assertThat(done.committed()).allSatisfy(c -> assertThat(c.bytes()).isPositive());
    assertThat(done.empty().size()).isEqualTo(locations - 3);
    assertThat(done.empty().contains(locations - 1, 0)).isTrue();
    Eventually.await(
        "the commit's record",
        () -> log.calls.stream().anyMatch(c -> c.contains("locations " + locations)));
    assertThat(store.openPartitionsByDisk()).containsExactly(0, 0);

    // An idle location reads as committed empty, on the disk it was reserved on, and is closed.
    PartitionCommit.Committed idle = store.committed(key(7));
    assertThat(idle.bytes()).isZero();
    assertThat(idle.file()).isEmpty();
    assertThat(store.disk(key(7)).index()).isEqualTo(1);
    assertThat(push(7, 0, 500)).isEqualTo(PushStatus.STAGE_ENDED);
    assertThat(store.takesData(key(7))).isFalse();
    assertThat(store.writer(key(7))).isEmpty();

    store.expire(SHUFFLE).orTimeout(30, TimeUnit.SECONDS).join();
    assertThat(store.heldLocations()).isZero();
  }

  @Test
  void aSealClosesIdleLocationsAndTheCommitAfterItAnswersThemEmpty() {
    store.reserve(SHUFFLE, TOKEN, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 1)));
    assertThat(push(0, 0, 500)).isEqualTo(PushStatus.OK);
    assertThat(store.takesData(key(1))).isTrue();

    store.refuseReservations("is stopping (test)");
    SealReport sealed = store.sealAll().orTimeout(30, TimeUnit.SECONDS).join();
    assertThat(sealed.sealedLocations()).isEqualTo(2);
    // The idle one moves its first part elsewhere, as the sealed written one does.
    assertThat(push(1, 0, 500)).isEqualTo(PushStatus.SPLIT);
    assertThat(push(0, 1, 500)).isEqualTo(PushStatus.SPLIT);
    assertThat(store.takesData(key(1))).isFalse();
    assertThat(store.openPartitionsByDisk()).containsExactly(0, 0);

    ShuffleCommit done = store.commit(SHUFFLE, TOKEN).orTimeout(30, TimeUnit.SECONDS).join();
    assertThat(done.committed()).extracting(c -> c.key().partition()).containsExactly(0);
    assertThat(done.committed().get(0).bytes()).isPositive();
    assertThat(done.empty().contains(1, 0)).isTrue();
    assertThat(done.locations()).isEqualTo(2);
  }

  @Test
  void aShuffleWithNothingHereCommitsAndExpiresNothing() {
    ShuffleCommit nothing = store.commit(new ShuffleId(new AppId("app-none"), 1), TOKEN).join();
    assertThat(nothing.committed()).isEmpty();
    assertThat(nothing.failed()).isEmpty();
    store.expire(new ShuffleId(new AppId("app-none"), 1)).orTimeout(10, TimeUnit.SECONDS).join();
    assertThat(log.calls).isEmpty();
  }
}
