package io.faro.worker.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.batch.BatchDecoder;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.DiskHealth;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.PartitionFileReader;
import io.faro.worker.testing.Batches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Partition writers and flushers on a real disk directory. */
class PartitionWriterTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-writer"), 1);
  private static final long FLUSH = 4 * 1024;
  private static final long CHUNK = 16 * 1024;

  @TempDir Path root;
  private Disks disks;
  private ScheduledExecutorService memoryThread;
  private MemoryBudget budget;
  private PartitionStore store;

  @BeforeEach
  void setUp() {
    disks =
        Disks.open(
            List.of(
                new DiskDir(root.resolve("d0"), DiskTier.SSD),
                new DiskDir(root.resolve("d1"), DiskTier.HDD)),
            Disks.Options.buffered(2),
            "test");
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    budget = new MemoryBudget(1L << 30, 1L << 29, () -> store.flushBuffered(), memoryThread);
    store = new PartitionStore(disks, new WriterSettings(FLUSH, CHUNK));
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    store.close();
    disks.close();
    memoryThread.shutdownNow();
    memoryThread.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void aReservationForAFullDiskGoesToTheSameTierThenTheNextSlowerThenAFasterOne() {
    try (Disks tiers =
            Disks.open(
                List.of(
                    new DiskDir(root.resolve("t0"), DiskTier.NVME),
                    new DiskDir(root.resolve("t1"), DiskTier.HDD),
                    new DiskDir(root.resolve("t2"), DiskTier.SSD),
                    new DiskDir(root.resolve("t3"), DiskTier.NVME)),
                Disks.Options.buffered(1),
                "tiers");
        PartitionStore onTiers = new PartitionStore(tiers, new WriterSettings(FLUSH, CHUNK))) {
      int[] next = {0};
      java.util.function.IntUnaryOperator reserveOn =
          disk -> {
            int partition = next[0]++;
            onTiers.reserve(SHUFFLE, List.of(new Reservation(partition, 0, disk)));
            return onTiers
                .writer(new PartitionKey(SHUFFLE, partition, 0))
                .orElseThrow()
                .diskIndex();
          };
      // Full: fewer usable bytes than the reserve asked of the check.
      tiers.get(0).check(Long.MAX_VALUE);
      assertThat(reserveOn.applyAsInt(0)).as("the other NVMe disk").isEqualTo(3);
      tiers.get(3).check(Long.MAX_VALUE);
      assertThat(reserveOn.applyAsInt(0)).as("NVMe full: the next tier, SSD").isEqualTo(2);
      tiers.get(2).check(Long.MAX_VALUE);
      assertThat(reserveOn.applyAsInt(3)).as("NVMe and SSD full: HDD").isEqualTo(1);
      tiers.get(2).check(0);
      tiers.get(3).check(0);
      tiers.get(1).check(Long.MAX_VALUE);
      assertThat(reserveOn.applyAsInt(1))
          .as("HDD full, SSD and an NVMe healthy: the nearest faster tier, SSD")
          .isEqualTo(2);
    }
  }

  @Test
  void manyAppendsKeepTheirOrderAndCutChunksAfterTheCrossingPart() throws IOException {
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 1)));
    Random random = new Random(42);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    List<ByteBuf> appended = new ArrayList<>();
    List<Long> expectedOffsets = new ArrayList<>(List.of(0L));
    long total = 0;
    long chunkStart = 0;
    for (int i = 0; i < 300; i++) {
      byte[] bytes = new byte[1 + random.nextInt(3000)];
      random.nextBytes(bytes);
      expected.writeBytes(bytes);
      ByteBuf part = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
      appended.add(part);
      assertThat(append(key, part)).isEqualTo(PushStatus.OK);
      total += bytes.length;
      if (total - chunkStart >= CHUNK) {
        expectedOffsets.add(total);
        chunkStart = total;
      }
    }
    if (total > chunkStart) {
      expectedOffsets.add(total);
    }

    ShuffleCommit commit = store.commit(SHUFFLE).join();

    assertThat(commit.failed()).isEmpty();
    PartitionCommit.Committed committed = commit.committed().get(0);
    assertThat(committed.bytes()).isEqualTo(total);
    assertThat(committed.chunks().asList()).isEqualTo(expectedOffsets);
    assertThat(committed.chunks().chunkCount()).isGreaterThan(10);
    Path file = committed.file().orElseThrow();
    assertThat(file).isEqualTo(FileLayout.partitionFile(root.resolve("d1"), key));
    assertThat(PartitionFileReader.readIndex(file)).isEqualTo(committed.chunks());
    assertThat(Arrays.copyOf(Files.readAllBytes(file), (int) total))
        .isEqualTo(expected.toByteArray());
    assertThat(appended).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    assertThat(budget.used()).isZero();
  }

  @Test
  void eachChunkKnowsTheMapsOfItsBatchesAndKeepsThemInItsFile() {
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    io.faro.worker.testing.Batches batches = new io.faro.worker.testing.Batches(false, 5);
    // Maps 0..9 one after the other, 3 parts of ~3 KB each: chunks of 16 KB hold about 2 maps.
    for (int map = 0; map < 10; map++) {
      for (int b = 0; b < 3; b++) {
        assertThat(append(key, batches.batch(map, 0, b, 3000))).isEqualTo(PushStatus.OK);
      }
    }
    // A part of two batches of maps far apart: its chunk's range covers both.
    ByteBuf two = batches.batch(30, 0, 0, 100);
    ByteBuf other = batches.batch(12, 0, 0, 100);
    two.writeBytes(other);
    other.release();
    assertThat(append(key, two)).isEqualTo(PushStatus.OK);

    PartitionCommit.Committed committed = store.commit(SHUFFLE).join().committed().get(0);
    ChunkIndex chunks = committed.chunks();
    assertThat(chunks.hasMapRanges()).isTrue();
    assertThat(chunks.chunkCount()).isGreaterThan(3);
    assertThat(chunks.firstMap(0)).isZero();
    for (int i = 1; i < chunks.chunkCount(); i++) {
      assertThat(chunks.firstMap(i))
          .as("maps came in order: chunk %d starts where chunk %d ended", i, i - 1)
          .isGreaterThanOrEqualTo(chunks.lastMap(i - 1));
      assertThat(chunks.lastMap(i - 1) - chunks.firstMap(i - 1))
          .as("a chunk of 16 KB holds about 2 maps of 9 KB")
          .isLessThanOrEqualTo(2);
    }
    int last = chunks.chunkCount() - 1;
    assertThat(chunks.lastMap(last)).isEqualTo(30);
    assertThat(PartitionFileReader.readIndex(committed.file().orElseThrow())).isEqualTo(chunks);
  }

  @Test
  void concurrentAppendsToOnePartitionStayWholeAndInOrderPerAppender() throws Exception {
    PartitionKey key = new PartitionKey(SHUFFLE, 5, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(5, 0, 0)));
    int appenders = 4;
    int batchesEach = 200;
    ExecutorService threads = Executors.newFixedThreadPool(appenders);
    try {
      List<CompletableFuture<Void>> done = new ArrayList<>();
      for (int t = 0; t < appenders; t++) {
        int mapId = t;
        done.add(
            CompletableFuture.runAsync(
                () -> {
                  Batches batches = new Batches(mapId % 2 == 0, mapId);
                  for (int b = 0; b < batchesEach; b++) {
                    ByteBuf batch = batches.batch(mapId, 0, b, 1 + batches.random().nextInt(600));
                    assertThat(append(key, batch)).isEqualTo(PushStatus.OK);
                  }
                },
                threads));
      }
      CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
    }
    PartitionCommit.Committed committed = store.commit(SHUFFLE).join().committed().get(0);
    byte[] data =
        Arrays.copyOf(Files.readAllBytes(committed.file().orElseThrow()), (int) committed.bytes());

    Map<Integer, List<Integer>> batchIdsByMap = new HashMap<>();
    ByteBuf wrapped = Unpooled.wrappedBuffer(data);
    // Every chunk decodes on its own: a chunk boundary never splits a batch.
    for (int c = 0; c < committed.chunks().chunkCount(); c++) {
      ByteBuf chunk =
          wrapped.slice(
              (int) committed.chunks().offset(c), (int) committed.chunks().chunkLength(c));
      new BatchDecoder()
          .decode(
              chunk,
              "chunk " + c,
              (m, a, b) -> true,
              batch ->
                  batchIdsByMap
                      .computeIfAbsent(batch.mapId(), m -> new ArrayList<>())
                      .add(batch.batchId()));
    }
    assertThat(batchIdsByMap).hasSize(appenders);
    List<Integer> inOrder = new ArrayList<>();
    for (int b = 0; b < batchesEach; b++) {
      inOrder.add(b);
    }
    assertThat(batchIdsByMap.values()).allSatisfy(ids -> assertThat(ids).isEqualTo(inOrder));
    assertThat(budget.used()).isZero();
  }

  @Test
  void aCommittedPartitionAnswersStageEndedAndACommitIsIdempotent() {
    PartitionKey key = new PartitionKey(SHUFFLE, 1, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(1, 0, 0), new Reservation(2, 0, 0)));
    assertThat(append(key, Unpooled.wrappedBuffer(new byte[100]))).isEqualTo(PushStatus.OK);

    ShuffleCommit first = store.commit(SHUFFLE).join();
    ByteBuf late = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(1);
    assertThat(append(key, late)).isEqualTo(PushStatus.STAGE_ENDED);
    assertThat(late.refCnt()).isZero();
    ByteBuf unknown = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(1);
    assertThat(append(new PartitionKey(SHUFFLE, 9, 0), unknown)).isEqualTo(PushStatus.STAGE_ENDED);
    assertThat(unknown.refCnt()).isZero();

    assertThat(store.commit(SHUFFLE).join()).isEqualTo(first);
    assertThat(first.committed()).extracting(c -> c.key().partition()).containsExactly(1);
    // Partition 2 received nothing: committed empty, read as such.
    assertThat(first.empty().size()).isEqualTo(1);
    assertThat(first.empty().contains(2, 0)).isTrue();
    PartitionCommit.Committed empty = store.committed(new PartitionKey(SHUFFLE, 2, 0));
    assertThat(empty.bytes()).isZero();
    assertThat(empty.file()).isEmpty();
    assertThat(empty.chunks()).isEqualTo(ChunkIndex.empty());
  }

  @Test
  void aPartitionNobodyReservedIsNotHere() {
    ByteBuf part = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(1);
    assertThat(append(new PartitionKey(SHUFFLE, 3, 0), part)).isEqualTo(PushStatus.NOT_HERE);
    assertThat(part.refCnt()).isZero();
  }

  @Test
  void aFailedWriteFailsThePartitionNotTheWorker() throws IOException {
    // A regular file where the app directory should be: creating the partition file fails.
    Files.createDirectories(root.resolve("d0"));
    Files.writeString(FileLayout.appDir(root.resolve("d0"), SHUFFLE.app()), "in the way");
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 1)));
    PartitionKey broken = new PartitionKey(SHUFFLE, 0, 0);
    PartitionKey healthy = new PartitionKey(SHUFFLE, 1, 0);
    assertThat(append(broken, Unpooled.wrappedBuffer(new byte[(int) FLUSH])))
        .isEqualTo(PushStatus.OK);
    assertThat(append(healthy, Unpooled.wrappedBuffer(new byte[(int) FLUSH])))
        .isEqualTo(PushStatus.OK);

    // Once the flusher has failed, the location sends clients elsewhere.
    Eventually.await(
        "appends to the broken partition to answer SPLIT",
        () -> append(broken, Unpooled.wrappedBuffer(new byte[10])) == PushStatus.SPLIT);

    ShuffleCommit commit = store.commit(SHUFFLE).join();

    assertThat(commit.failed()).extracting(f -> f.key()).containsExactly(broken);
    assertThat(commit.failed().get(0).reason()).contains("0-0.data");
    assertThat(commit.committed()).extracting(c -> c.key()).containsExactly(healthy);
    assertThat(budget.used()).isZero();
  }

  @Test
  void partitionsOnAFullOrBrokenDiskAnswerSplitAndNewOnesGoToAHealthyDisk() {
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 1)));
    PartitionKey onD0 = new PartitionKey(SHUFFLE, 0, 0);
    PartitionKey onD1 = new PartitionKey(SHUFFLE, 1, 0);
    Disk d0 = disks.get(0);
    Disk d1 = disks.get(1);

    // No disk has more usable bytes than Long.MAX_VALUE: full.
    assertThat(d0.check(Long.MAX_VALUE).state()).isEqualTo(DiskHealth.State.FULL);
    assertThat(append(onD0, Unpooled.wrappedBuffer(new byte[10])))
        .as("soft split mode")
        .isEqualTo(PushStatus.SOFT_SPLIT);
    assertThat(append(onD1, Unpooled.wrappedBuffer(new byte[10]))).isEqualTo(PushStatus.OK);
    // The master placed on disk 0 before it heard: the worker takes the partition on disk 1.
    store.reserve(SHUFFLE, List.of(new Reservation(2, 0, 0)));
    assertThat(store.writer(new PartitionKey(SHUFFLE, 2, 0)).orElseThrow().diskIndex())
        .isEqualTo(1);

    d0.writeFailed("test");
    assertThat(append(onD0, Unpooled.wrappedBuffer(new byte[10])))
        .as("broken")
        .isEqualTo(PushStatus.SPLIT);

    // No disk takes data: the reservation is refused as a whole, and nothing of it stays.
    d1.check(Long.MAX_VALUE);
    assertThatThrownBy(
            () ->
                store.reserve(SHUFFLE, List.of(new Reservation(3, 0, 1), new Reservation(4, 0, 0))))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORAGE_FAILED))
        .hasMessageContaining("no disk of this worker takes data");
    assertThat(store.writer(new PartitionKey(SHUFFLE, 3, 0))).isEmpty();
    assertThat(store.writer(new PartitionKey(SHUFFLE, 4, 0))).isEmpty();
    // Already reserved locations are no new reservation: repeating one still succeeds.
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));

    // A check that passes makes the disk and its partitions take data again.
    assertThat(d0.check(0).state()).isEqualTo(DiskHealth.State.HEALTHY);
    assertThat(append(onD0, Unpooled.wrappedBuffer(new byte[10]))).isEqualTo(PushStatus.OK);
    // Kept: the soft split's part, partition 1's and the last one; the broken disk's was refused.
    assertThat(budget.used()).isEqualTo(30);
  }

  @Test
  void expiringAShuffleDeletesItsFilesAndDirectories() throws IOException {
    ShuffleId other = new ShuffleId(SHUFFLE.app(), 2);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 1)));
    store.reserve(other, List.of(new Reservation(0, 0, 0)));
    append(new PartitionKey(SHUFFLE, 0, 0), Unpooled.wrappedBuffer(new byte[(int) FLUSH]));
    append(new PartitionKey(SHUFFLE, 1, 0), Unpooled.wrappedBuffer(new byte[100]));
    append(new PartitionKey(other, 0, 0), Unpooled.wrappedBuffer(new byte[100]));
    store.commit(SHUFFLE).join();
    store.commit(other).join();
    assertThat(FileLayout.shuffleDir(root.resolve("d1"), SHUFFLE)).isDirectory();

    store.expire(SHUFFLE).join();

    assertThat(FileLayout.shuffleDir(root.resolve("d0"), SHUFFLE)).doesNotExist();
    assertThat(FileLayout.appDir(root.resolve("d1"), SHUFFLE.app())).doesNotExist();
    assertThat(FileLayout.partitionFile(root.resolve("d0"), new PartitionKey(other, 0, 0)))
        .isRegularFile();
    assertThat(store.shuffles()).containsExactly(other);

    store.expire(other).join();
    try (var left = Files.list(root.resolve("d0"))) {
      assertThat(left).isEmpty();
    }
  }

  @Test
  void reliefFlushesBuffersBelowTheirFlushSize() {
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    append(key, Unpooled.wrappedBuffer(new byte[100]));
    assertThat(budget.used()).isEqualTo(100);
    store.flushBuffered();
    Eventually.await("the small buffer to be flushed", budget::used, used -> used == 0);
    assertThat(store.openPartitionsByDisk()).containsExactly(1, 0);
  }

  @Test
  void aFrameStaysChargedInFullUntilItsLastPartIsWritten() {
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0), new Reservation(1, 0, 0)));
    // One frame: a full flush buffer for partition 0, a small part for partition 1, and a part
    // for a partition this worker does not hold.
    io.netty.buffer.ByteBuf frame =
        Unpooled.directBuffer((int) FLUSH + 200).writeZero((int) FLUSH + 200);
    io.faro.worker.memory.FrameCharge charge =
        new io.faro.worker.memory.FrameCharge(budget, frame.readableBytes(), 3);
    assertThat(
            store.append(
                new PartitionKey(SHUFFLE, 0, 0), frame.retainedSlice(0, (int) FLUSH), charge))
        .isEqualTo(PushStatus.OK);
    assertThat(
            store.append(
                new PartitionKey(SHUFFLE, 1, 0), frame.retainedSlice((int) FLUSH, 100), charge))
        .isEqualTo(PushStatus.OK);
    assertThat(
            store.append(
                new PartitionKey(SHUFFLE, 7, 0),
                frame.retainedSlice((int) FLUSH + 100, 100),
                charge))
        .isEqualTo(PushStatus.NOT_HERE);
    frame.release();
    assertThat(budget.used()).isEqualTo(FLUSH + 200);
    Eventually.await("partition 0's flush", frame::refCnt, refs -> refs == 1);
    // Partition 0 is written, but the small part still pins the whole frame.
    assertThat(budget.used()).isEqualTo(FLUSH + 200);
    store.flushBuffered();
    Eventually.await("the frame's last part to be written", budget::used, used -> used == 0);
    assertThat(frame.refCnt()).isZero();
  }

  /** Appends {@code part} as if it came alone in a push frame. */
  private PushStatus append(PartitionKey key, io.netty.buffer.ByteBuf part) {
    return store.append(
        key, part, new io.faro.worker.memory.FrameCharge(budget, part.readableBytes(), 1));
  }
}
