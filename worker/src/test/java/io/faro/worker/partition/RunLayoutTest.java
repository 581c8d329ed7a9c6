package io.faro.worker.partition;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.DiskReader;
import io.faro.worker.storage.DiskThreads;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.Extent;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.IoMode;
import io.faro.worker.storage.Layout;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Partition writers of a disk of the runs layout, on a real directory. */
class RunLayoutTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-runs"), 1);
  private static final long CHUNK = 16 * 1024;
  private static final long RUN = 64 * 1024;

  @TempDir Path root;
  private Disks disks;
  private ScheduledExecutorService memoryThread;
  private MemoryBudget budget;
  private PartitionStore store;

  private void open(Layout layout, int readAround) {
    disks =
        Disks.open(
            List.of(new DiskDir(root.resolve(layout.configName()), DiskTier.HDD)),
            new Disks.Options(
                Disks.Options.everyTier(new DiskThreads(1, 1)),
                IoMode.AUTO,
                8L << 20,
                1000,
                Disks.Options.every(layout),
                readAround),
            "test");
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    budget = new MemoryBudget(1L << 30, 1L << 29, () -> store.flushBuffered(), memoryThread);
    store =
        new PartitionStore(
            disks, new WriterSettings(4096, CHUNK, Long.MAX_VALUE, false, false, RUN));
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    if (store != null) {
      store.close();
      disks.close();
      memoryThread.shutdownNow();
      memoryThread.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Appends random parts to partitions 0..n-1 in a random order; what each received. */
  private Map<Integer, byte[]> appendRandomly(int partitions, int parts, List<ByteBuf> appended) {
    store.reserve(
        SHUFFLE,
        java.util.stream.IntStream.range(0, partitions)
            .mapToObj(p -> new Reservation(p, 0, 0))
            .toList());
    Random random = new Random(7);
    Map<Integer, ByteArrayOutputStream> expected = new HashMap<>();
    for (int i = 0; i < parts; i++) {
      int p = random.nextInt(partitions);
      byte[] bytes = new byte[1 + random.nextInt(3000)];
      random.nextBytes(bytes);
      expected.computeIfAbsent(p, k -> new ByteArrayOutputStream()).writeBytes(bytes);
      ByteBuf part = Unpooled.directBuffer(bytes.length).writeBytes(bytes);
      appended.add(part);
      assertThat(
              store.append(
                  new PartitionKey(SHUFFLE, p, 0), part, new FrameCharge(budget, bytes.length, 1)))
          .isEqualTo(PushStatus.OK);
    }
    Map<Integer, byte[]> out = new HashMap<>();
    expected.forEach((p, b) -> out.put(p, b.toByteArray()));
    return out;
  }

  private static byte[] read(List<Extent> extents) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Extent e : extents) {
      byte[] all = Files.readAllBytes(e.file());
      out.write(all, (int) e.offset(), (int) e.length());
    }
    return out.toByteArray();
  }

  @Test
  void aShuffleIsWrittenAsFewRunsSortedByPartitionWithTheChunksOfAFileOfItsOwn()
      throws IOException {
    open(Layout.RUNS, 0);
    List<ByteBuf> appended = new ArrayList<>();
    Map<Integer, byte[]> expected = appendRandomly(40, 400, appended);
    long total = expected.values().stream().mapToLong(b -> b.length).sum();

    ShuffleCommit commit = store.commit(SHUFFLE).join();

    assertThat(commit.failed()).isEmpty();
    assertThat(commit.committed()).hasSize(40);
    Map<Path, Integer> lastPartitionInRun = new HashMap<>();
    Map<Path, Long> lastEndInRun = new HashMap<>();
    for (PartitionCommit.Committed c :
        commit.committed().stream()
            .sorted(java.util.Comparator.comparingInt(c -> c.key().partition()))
            .toList()) {
      byte[] want = expected.getOrDefault(c.key().partition(), new byte[0]);
      assertThat(c.data().inRuns() || want.length == 0).isTrue();
      assertThat(c.file()).isEmpty();
      assertThat(read(c.data().list())).as("partition %s", c.key()).isEqualTo(want);
      // The chunks are those a file of its own gets: cut after the part that reaches CHUNK.
      assertThat(c.chunks().dataLength()).isEqualTo(want.length);
      for (Extent e : c.data().list()) {
        // Within a run, partitions follow each other in order, with nothing between them.
        Integer before = lastPartitionInRun.put(e.file(), c.key().partition());
        if (before != null) {
          assertThat(before).isLessThan(c.key().partition());
        }
        assertThat(e.offset()).isEqualTo(lastEndInRun.getOrDefault(e.file(), 0L));
        lastEndInRun.put(e.file(), e.end());
      }
    }
    // A run once at least 64 KiB are buffered (more if parts keep coming while it is written),
    // then the commit's last run, and the commit's run index.
    List<Path> files;
    try (Stream<Path> list = Files.list(FileLayout.shuffleDir(disks.get(0).root(), SHUFFLE))) {
      files = list.toList();
    }
    List<Path> runs = files.stream().filter(f -> FileLayout.runNumber(f) >= 0).toList();
    List<Path> indexes = files.stream().filter(FileLayout::isRunIndex).toList();
    assertThat(runs.size() + indexes.size()).isEqualTo(files.size());
    assertThat(indexes).hasSize(1);
    assertThat(runs.size()).isBetween(1, (int) (total / RUN) + 1);
    assertThat(runs.stream().mapToLong(f -> f.toFile().length()).sum()).isEqualTo(total);
    assertThat(appended).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    assertThat(budget.used()).isZero();
    assertThat(disks.get(0).usedBytes()).isEqualTo(total + indexes.get(0).toFile().length());
    assertThat(RunRecords.readIndex(indexes.get(0), SHUFFLE)).hasSize(expected.size());

    store.expire(SHUFFLE).join();
    assertThat(FileLayout.shuffleDir(disks.get(0).root(), SHUFFLE)).doesNotExist();
    assertThat(disks.get(0).usedBytes()).isZero();
  }

  @Test
  void theSameAppendsCutTheSameChunksInRunsAsInFiles() {
    List<List<Long>> chunks = new ArrayList<>();
    for (Layout layout : Layout.values()) {
      open(layout, 0);
      appendRandomly(10, 200, new ArrayList<>());
      chunks.add(
          store.commit(SHUFFLE).join().committed().stream()
              .sorted(java.util.Comparator.comparingInt(c -> c.key().partition()))
              .map(c -> c.chunks().asList())
              .flatMap(List::stream)
              .toList());
      tearDown0();
    }
    assertThat(chunks.get(1)).isEqualTo(chunks.get(0)).hasSizeGreaterThan(20);
  }

  private void tearDown0() {
    try {
      tearDown();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    store = null;
  }

  @Test
  void reliefWritesARunOfWhatIsBufferedAndASealedShuffleCommitsTheSameRuns() throws IOException {
    open(Layout.RUNS, 0);
    Map<Integer, byte[]> expected = appendRandomly(5, 10, new ArrayList<>());
    assertThat(budget.used()).isPositive();
    store.flushBuffered();
    Eventually.await("the buffered parts to be written as a run", budget::used, used -> used == 0);
    assertThat(FileLayout.runFile(disks.get(0).root(), SHUFFLE, 0)).isRegularFile();

    store.sealAll().join();
    assertThat(
            store.append(
                new PartitionKey(SHUFFLE, 0, 0),
                Unpooled.wrappedBuffer(new byte[10]),
                new FrameCharge(budget, 10, 1)))
        .as("a sealed location sends its clients elsewhere")
        .isEqualTo(PushStatus.SPLIT);
    ShuffleCommit commit = store.commit(SHUFFLE).join();
    assertThat(commit.failed()).isEmpty();
    for (PartitionCommit.Committed c : commit.committed()) {
      assertThat(read(c.data().list()))
          .isEqualTo(expected.getOrDefault(c.key().partition(), new byte[0]));
    }
  }

  @Test
  void aRunThatCannotBeWrittenFailsItsPartitionsNotTheWorker() throws IOException {
    open(Layout.RUNS, 0);
    // A regular file where the app directory should be: creating the run fails.
    Files.writeString(FileLayout.appDir(disks.get(0).root(), SHUFFLE.app()), "in the way");
    appendRandomly(3, 30, new ArrayList<>()); // less than a run: nothing written yet
    store.flushBuffered();
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    Eventually.await(
        "appends to answer SPLIT once a run failed",
        () ->
            store.append(key, Unpooled.wrappedBuffer(new byte[10]), new FrameCharge(budget, 10, 1))
                == PushStatus.SPLIT);

    ShuffleCommit commit = store.commit(SHUFFLE).join();

    assertThat(commit.committed()).isEmpty();
    assertThat(commit.failed()).hasSize(3).allSatisfy(f -> assertThat(f.reason()).contains("run-"));
    assertThat(budget.used()).isZero();
  }

  @Test
  void aReadOfARunReadsAroundItsPieceAndTheNextPiecesComeFromThatRead() throws IOException {
    open(Layout.RUNS, 256 * 1024);
    Map<Integer, byte[]> expected = appendRandomly(20, 300, new ArrayList<>());
    ShuffleCommit commit = store.commit(SHUFFLE).join();
    DiskReader reader = disks.get(0).reader();
    List<PartitionCommit.Committed> sorted =
        commit.committed().stream()
            .sorted(java.util.Comparator.comparingInt(c -> c.key().partition()))
            .toList();
    long piecesRead = 0;
    for (PartitionCommit.Committed c : sorted) {
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      for (int i = 0; i < c.chunks().chunkCount(); i++, piecesRead++) {
        ByteBuf bytes =
            reader
                .read(c.data().slice(c.chunks().offset(i), c.chunks().chunkLength(i)), () -> true)
                .join();
        got.writeBytes(ByteBufUtil.getBytes(bytes));
        bytes.release();
      }
      assertThat(got.toByteArray())
          .isEqualTo(expected.getOrDefault(c.key().partition(), new byte[0]));
    }
    // Every run is at least 64 KiB and the whole shuffle about 450 KiB: how many runs it makes
    // depends on how far the appends got while a run was written. The first piece read of a run
    // reads up to 256 KiB around it, and every later piece within that is found in that read: at
    // most one read around per 256 KiB of a run, for many more pieces.
    long runs;
    long readsNeeded;
    try (Stream<Path> list = Files.list(FileLayout.shuffleDir(disks.get(0).root(), SHUFFLE))) {
      List<Long> sizes = new ArrayList<>();
      for (Path run : list.filter(f -> FileLayout.runNumber(f) >= 0).toList()) {
        sizes.add(Files.size(run));
      }
      runs = sizes.size();
      readsNeeded = sizes.stream().mapToLong(size -> (size + 256 * 1024 - 1) / (256 * 1024)).sum();
    }
    assertThat(runs).isPositive();
    assertThat(piecesRead).isGreaterThanOrEqualTo(20).isGreaterThan(2 * readsNeeded);
    assertThat(reader.readsAround()).isBetween(1L, readsNeeded);
    assertThat(reader.segmentsInUse()).isZero();
  }
}
