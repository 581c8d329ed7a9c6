package io.faro.worker.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.storage.Disks;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.TestDisks;
import io.netty.buffer.ByteBuf;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reservations on a store over two real disk directories: checked whole before anything is added,
 * idempotent, held by their owner and app registration, bounded per request and per worker, refused
 * after the commit started and while the worker leaves, released when the shuffle expires.
 */
class ReservationsTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-reserve"), 3);
  private static final long TOKEN = 42;

  @TempDir Path root;
  private Disks disks;
  private PartitionStore store;

  @BeforeEach
  void open() {
    disks = TestDisks.ssds(root, 2);
    store =
        new PartitionStore(
            disks,
            new WriterSettings(4096, 16 * 1024, Long.MAX_VALUE, false, false, 64 * 1024),
            peer -> {
              throw new AssertionError("no replication here");
            },
            new ReservationLimits(10, 12));
  }

  @AfterEach
  void close() {
    store.close();
    disks.close();
  }

  private static List<Reservation> partitions(int from, int to) {
    return IntStream.range(from, to).mapToObj(p -> new Reservation(p, 0, p % 2)).toList();
  }

  private FaroException refused(Runnable reserve) {
    return catchThrowableOfType(FaroException.class, reserve::run);
  }

  @Test
  void aReservationIsCheckedWholeAndARefusalAddsNothing() {
    store.reserve(SHUFFLE, TOKEN, partitions(0, 8));
    assertThat(store.heldLocations()).isEqualTo(8);

    List<Reservation> badDisk =
        List.of(new Reservation(8, 0, 0), new Reservation(9, 0, 0), new Reservation(10, 0, 2));
    FaroException noDisk = refused(() -> store.reserve(SHUFFLE, TOKEN, badDisk));
    assertThat(noDisk.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(noDisk.getMessage()).contains("asks for disk 2").contains("faro.worker.dirs");

    // 8 held + 5 new > 12 (faro.worker.max.partitions): none of the five is added.
    FaroException full = refused(() -> store.reserve(SHUFFLE, TOKEN, partitions(8, 13)));
    assertThat(full.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(full.getMessage()).contains("holds 8 of at most 12").contains("max.partitions");

    FaroException tooMany = refused(() -> store.reserve(SHUFFLE, TOKEN, partitions(20, 31)));
    assertThat(tooMany.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(tooMany.getMessage()).contains("asks for 11 locations; at most 10");

    assertThat(store.heldLocations()).isEqualTo(8);
    assertThat(store.writer(new PartitionKey(SHUFFLE, 8, 0))).isEmpty();

    // The same locations again, and the ones that fit: each held once.
    store.reserve(SHUFFLE, TOKEN, partitions(2, 12));
    assertThat(store.heldLocations()).isEqualTo(12);
    assertThat(store.writer(new PartitionKey(SHUFFLE, 11, 0)).orElseThrow().key().partition())
        .isEqualTo(11);
  }

  @Test
  void aShuffleIsHeldByItsOwnerAndItsAppRegistration() {
    store.reserve(SHUFFLE, TOKEN, "nonce-a", partitions(0, 2));
    FaroException otherOwner =
        refused(() -> store.reserve(SHUFFLE, TOKEN + 1, "nonce-a", partitions(2, 3)));
    assertThat(otherOwner.code()).isEqualTo(ErrorCode.NOT_OWNER);
    FaroException otherApp =
        refused(() -> store.reserve(SHUFFLE, TOKEN, "nonce-b", partitions(2, 3)));
    assertThat(otherApp.code()).isEqualTo(ErrorCode.UNAUTHENTICATED);
    assertThat(otherApp.getMessage()).contains("another registration of its app");
    assertThat(store.appNonce(SHUFFLE)).isEqualTo("nonce-a");
    assertThat(store.heldLocations()).isEqualTo(2);
  }

  @Test
  void noLocationIsAddedOnceTheCommitStarted() throws Exception {
    store.reserve(SHUFFLE, TOKEN, partitions(0, 2));
    store.commit(SHUFFLE, TOKEN).get(10, TimeUnit.SECONDS);
    // Those it holds: nothing to do.
    store.reserve(SHUFFLE, TOKEN, partitions(0, 2));
    FaroException late = refused(() -> store.reserve(SHUFFLE, TOKEN, partitions(2, 3)));
    assertThat(late.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(late.getMessage()).contains("is already committed");
  }

  @Test
  void aLeavingWorkerRefusesRetryablyWithItsReasonAndTakesThemAgainAfter() throws Exception {
    store.refuseReservations("is draining (bin/faro admin decommission-worker)");
    FaroException leaving = refused(() -> store.reserve(SHUFFLE, TOKEN, partitions(0, 2)));
    assertThat(leaving.code()).isEqualTo(ErrorCode.SHUTTING_DOWN);
    assertThat(leaving.code().retryable()).isTrue();
    assertThat(leaving.getMessage())
        .endsWith("this worker is draining (bin/faro admin decommission-worker)");
    assertThat(store.shuffles()).doesNotContain(SHUFFLE);

    store.takeReservations();
    store.reserve(SHUFFLE, TOKEN, partitions(0, 4));
    assertThat(store.heldLocations()).isEqualTo(4);
    store.expire(SHUFFLE).get(10, TimeUnit.SECONDS);
    assertThat(store.heldLocations()).isZero();
  }

  @Test
  void aPartFromAnotherRegistrationMakesNoWriterOfAnIdleLocation() {
    store.reserve(SHUFFLE, TOKEN, "nonce-a", partitions(0, 2));
    PartitionKey idle = new PartitionKey(SHUFFLE, 1, 0);
    FaroException stranger = refused(() -> store.writer(idle, "nonce-b"));
    assertThat(stranger.code()).isEqualTo(ErrorCode.UNAUTHENTICATED);
    assertThat(store.writtenLocations()).isZero();
    assertThat(store.writer(idle, "nonce-a")).isPresent();
    assertThat(store.writtenLocations()).isEqualTo(1);
  }

  @Test
  void locationsThatReceiveDataAreBoundedApartFromTheIdleOnes() throws Exception {
    Path other = root.resolve("written");
    Disks two = TestDisks.ssds(other, 2);
    ScheduledExecutorService memoryThread = Executors.newSingleThreadScheduledExecutor();
    MemoryBudget budget = new MemoryBudget(1L << 30, 1L << 29, () -> {}, memoryThread);
    // Twelve held at most, two of them written.
    try (PartitionStore bounded =
        new PartitionStore(
            two,
            new WriterSettings(4096, 16 * 1024),
            peer -> {
              throw new AssertionError("no replication here");
            },
            new ReservationLimits(10, 12, 2))) {
      bounded.reserve(SHUFFLE, TOKEN, partitions(0, 10));
      assertThat(bounded.heldLocations()).isEqualTo(10);
      Batches batches = new Batches(false, 1);
      for (int p = 0; p < 2; p++) {
        assertThat(push(bounded, budget, batches.batch(p, 0, 0, 100), p)).isEqualTo(PushStatus.OK);
      }
      // A third location's first part moves on; the two written take more.
      ByteBuf third = batches.batch(2, 0, 0, 100);
      assertThat(push(bounded, budget, third, 2)).isEqualTo(PushStatus.WORKER_FULL);
      assertThat(third.refCnt()).isZero();
      assertThat(bounded.counters().fullAnswers()).isEqualTo(1);
      assertThat(push(bounded, budget, batches.batch(0, 0, 1, 100), 0)).isEqualTo(PushStatus.OK);
      assertThat(bounded.writtenLocations()).isEqualTo(2);
      assertThat(bounded.takesData(new PartitionKey(SHUFFLE, 2, 0)))
          .as("still idle, and reserved")
          .isTrue();

      // Its commit answers the refused one empty; the expiry gives both counts back.
      ShuffleCommit done = bounded.commit(SHUFFLE, TOKEN).get(10, TimeUnit.SECONDS);
      assertThat(done.committed()).extracting(c -> c.key().partition()).containsExactly(0, 1);
      assertThat(done.empty().size()).isEqualTo(8);
      // Once its commit started, a part is from a losing attempt, even where the worker is full.
      ByteBuf late = batches.batch(3, 0, 0, 100);
      assertThat(push(bounded, budget, late, 3)).isEqualTo(PushStatus.STAGE_ENDED);
      bounded.expire(SHUFFLE).get(10, TimeUnit.SECONDS);
      assertThat(bounded.heldLocations()).isZero();
      assertThat(bounded.writtenLocations()).isZero();
    } finally {
      two.close();
      memoryThread.shutdownNow();
    }
  }

  private static PushStatus push(
      PartitionStore store, MemoryBudget budget, ByteBuf part, int partition) {
    return store.append(
        new PartitionKey(SHUFFLE, partition, 0),
        part,
        new FrameCharge(budget, part.readableBytes(), 1));
  }
}
