package io.faro.worker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.testing.Eventually;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read scheduler of a disk: rounds in file-offset order, the bounded pool of read buffers, what
 * it counts and how it closes; on a disk read through the page cache ({@link DirectIoTest} reads
 * with direct I/O).
 *
 * <p>The order is observed through {@code stillWanted}, which a reader thread asks when a read's
 * turn comes; a read whose {@code stillWanted} waits on a latch holds the only reader thread, so
 * that the reads queued meanwhile are there together when the next round starts.
 */
class DiskReaderTest {
  /** No direct I/O: the reader reads through the page cache. */
  private static final DirectIo PAGE_CACHE = null;

  private static final int FILE_BYTES = 64 * 1024;
  private static final long WAIT_SECONDS = 10;

  @TempDir Path root;
  private Path a;
  private Path b;
  private final List<String> served = new CopyOnWriteArrayList<>();

  @BeforeEach
  void files() throws Exception {
    Random random = new Random(11);
    a = root.resolve("a.data");
    b = root.resolve("b.data");
    for (Path file : List.of(a, b)) {
      byte[] data = new byte[FILE_BYTES];
      random.nextBytes(data);
      Files.write(file, data);
    }
  }

  @Test
  void readsQueuedTogetherAreServedInFileThenOffsetOrder() throws Exception {
    try (DiskReader reader = reader(1)) {
      Blocker first = new Blocker("first");
      CompletableFuture<ByteBuf> firstRead = reader.read(a, 0, 10, first);
      first.awaitServing();

      // The only thread serves the first read; these queue at descending offsets, files mixed.
      List<Queued> reads = new ArrayList<>();
      for (int offset = 3000; offset >= 1000; offset -= 1000) {
        for (Path file : List.of(b, a)) {
          reads.add(
              new Queued(file, offset, reader.read(file, offset, 100, recording(file, offset))));
        }
      }
      assertThat(reader.queuedReads()).isEqualTo(6);
      first.release();

      assertBytes(firstRead, a, 0, 10);
      for (Queued read : reads) {
        assertBytes(read.bytes(), read.file(), read.offset(), 100);
      }
      assertThat(served)
          .containsExactly("first", "a@1000", "a@2000", "a@3000", "b@1000", "b@2000", "b@3000");
      assertThat(reader.queuedReads()).isZero();
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void aReadArrivingDuringARoundWaitsForTheNextEvenWithASmallerOffset() throws Exception {
    try (DiskReader reader = reader(1)) {
      Blocker first = new Blocker("first");
      CompletableFuture<ByteBuf> firstRead = reader.read(a, 0, 10, first);
      first.awaitServing();
      // The second round: these two, the first of them holding the thread once its turn comes.
      Blocker second = new Blocker("a@5000");
      CompletableFuture<ByteBuf> secondRead = reader.read(a, 5000, 100, second);
      CompletableFuture<ByteBuf> thirdRead = reader.read(a, 6000, 100, recording(a, 6000));
      first.release();
      second.awaitServing();

      // The second round is under way: an earlier offset of the same file waits for the third.
      CompletableFuture<ByteBuf> late = reader.read(a, 0, 100, recording(a, 0));
      assertThat(reader.queuedReads()).as("a@6000 in this round, a@0 for the next").isEqualTo(2);
      second.release();

      assertBytes(firstRead, a, 0, 10);
      assertBytes(secondRead, a, 5000, 100);
      assertBytes(thirdRead, a, 6000, 100);
      assertBytes(late, a, 0, 100);
      assertThat(served).containsExactly("first", "a@5000", "a@6000", "a@0");
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void aReaderThroughThePageCacheReadsAnyRangeWithinItsPool() throws Exception {
    Path file = root.resolve("large.data");
    byte[] data = writeRandom(file, 2 * DiskReader.SEGMENT_BYTES + 12345, 12);
    try (DiskReader reader = new DiskReader("test-reader", PAGE_CACHE, 2, 3L << 20, 1000)) {
      // Nothing to align: a read may take the whole pool but for the two bytes kept for alignment.
      assertThat(reader.maxReadBytes()).isEqualTo(3L * DiskReader.SEGMENT_BYTES - 2);
      long[][] ranges = {
        {0, 1},
        {0, data.length},
        {1, 4095},
        {DiskReader.SEGMENT_BYTES - 3, DiskReader.SEGMENT_BYTES + 6},
        {data.length - 10, 10},
        {12345, 2 * DiskReader.SEGMENT_BYTES}
      };
      for (long[] range : ranges) {
        ByteBuf bytes =
            reader
                .read(file, range[0], (int) range[1], () -> true)
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        try {
          assertThat(ByteBufUtil.getBytes(bytes))
              .as("bytes [%d, +%d)", range[0], range[1])
              .isEqualTo(Arrays.copyOfRange(data, (int) range[0], (int) (range[0] + range[1])));
        } finally {
          bytes.release();
        }
      }
      assertThat(reader.segmentsInUse()).isZero();

      // One byte over a segment takes two; they are the reader's until the bytes are released.
      ByteBuf held =
          reader
              .read(file, 7, DiskReader.SEGMENT_BYTES + 1, () -> true)
              .get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(reader.segmentsInUse()).isEqualTo(2);
      held.release();
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void itCountsTheBytesItReadsAndTheTimeReadingThem() throws Exception {
    try (DiskReader reader = reader(2)) {
      assertThat(reader.readBytes()).isZero();
      assertThat(reader.readNanos()).isZero();

      reader.read(a, 100, 1000, () -> true).get(WAIT_SECONDS, TimeUnit.SECONDS).release();
      assertThat(reader.readBytes()).isEqualTo(1000);
      long nanos = reader.readNanos();
      assertThat(nanos).isPositive();

      reader.read(b, 0, 5000, () -> true).get(WAIT_SECONDS, TimeUnit.SECONDS).release();
      assertThat(reader.readBytes()).isEqualTo(6000);
      assertThat(reader.readNanos()).isGreaterThan(nanos);

      // A skipped read reads nothing.
      reader.read(a, 0, 10, () -> false).handle((bytes, error) -> null).get();
      assertThat(reader.readBytes()).isEqualTo(6000);
    }
  }

  @Test
  void closingServesTheReadsQueuedBeforeAndRefusesLaterOnes() throws Exception {
    DiskReader reader = reader(1);
    Blocker first = new Blocker("first");
    CompletableFuture<ByteBuf> firstRead = reader.read(a, 0, 10, first);
    first.awaitServing();
    CompletableFuture<ByteBuf> queuedBefore = reader.read(b, 0, 10, () -> true);

    CompletableFuture<Void> closing = CompletableFuture.runAsync(reader::close);
    // Reads queued before close takes effect are skipped (not wanted); once it has, refused.
    Eventually.await(
        "a read refused as the worker shuts down",
        () -> hasFailedWith(reader.read(a, 0, 10, () -> false), ErrorCode.SHUTTING_DOWN));
    assertThat(closing).isNotDone();
    first.release();

    closing.get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertBytes(firstRead, a, 0, 10);
    assertBytes(queuedBefore, b, 0, 10);
    assertThat(reader.segmentsInUse()).isZero();
    assertThat(reader.queuedReads()).isZero();
  }

  @Test
  void aFailingStillWantedFailsItsReadAndNotTheReader() throws Exception {
    try (DiskReader reader = reader(1)) {
      CompletableFuture<ByteBuf> failed =
          reader.read(
              a,
              0,
              10,
              () -> {
                throw new IllegalStateException("broken asker");
              });
      assertThat(failed)
          .failsWithin(WAIT_SECONDS, TimeUnit.SECONDS)
          .withThrowableOfType(ExecutionException.class)
          .havingCause()
          .isInstanceOfSatisfying(
              FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORAGE_FAILED))
          .withMessageContaining("broken asker");
      assertBytes(reader.read(a, 0, 10, () -> true), a, 0, 10);
    }
  }

  @Test
  void readAheadWaitsBehindEveryChunkReadAndCountsWhatItFound() throws Exception {
    try (DiskReader reader = reader(1)) {
      assertThat(reader.readsThroughPageCache()).isTrue();
      Blocker first = new Blocker("first");
      CompletableFuture<ByteBuf> firstRead = reader.read(a, 0, 10, first);
      first.awaitServing();
      // Queued before a chunk read, served after it.
      CompletableFuture<Boolean> warm = reader.warm(b, FILE_BYTES);
      CompletableFuture<Void> warmServed = warm.thenRun(() -> served.add("warm b"));
      CompletableFuture<ByteBuf> read = reader.read(a, 100, 10, recording(a, 100));
      first.release();

      warmServed.get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(warm.get()).isTrue();
      assertBytes(firstRead, a, 0, 10);
      assertBytes(read, a, 100, 10);
      assertThat(served).containsExactly("first", "a@100", "warm b");
      // Loaded or found resident (a file just written usually is), and not counted as chunk reads.
      assertThat(reader.warmedBytes() + reader.warmResidentBytes()).isEqualTo(FILE_BYTES);
      assertThat(reader.warmNanos()).isPositive();
      assertThat(reader.readBytes()).isEqualTo(20);

      // Asked for more than the file holds: the file. A missing file: nothing, and no harm done.
      assertThat(reader.warm(a, 10L * FILE_BYTES).get(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
      assertThat(reader.warmedBytes() + reader.warmResidentBytes()).isEqualTo(2L * FILE_BYTES);
      assertThat(reader.warm(root.resolve("gone.data"), 10).get(WAIT_SECONDS, TimeUnit.SECONDS))
          .isFalse();
      assertThat(reader.warm(a, 0)).isCompletedWithValue(false);
      assertBytes(reader.read(a, 0, 10, () -> true), a, 0, 10);
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void aFileNotResidentIsReadThroughOneSegmentOnlyWhenOneIsFree() throws Exception {
    Path file = root.resolve("ahead.data");
    byte[] data = writeRandom(file, 2 * DiskReader.SEGMENT_BYTES + 12345, 13);
    // One segment in the pool. A test's files are always resident: read them regardless.
    try (DiskReader reader =
        new DiskReader("test-reader", PAGE_CACHE, 1, DiskReader.SEGMENT_BYTES, 10_000)) {
      assertThat(reader.warm(file, data.length, false).get(WAIT_SECONDS, TimeUnit.SECONDS))
          .isTrue();
      assertThat(reader.warmedBytes()).isEqualTo(data.length);
      assertThat(reader.warmResidentBytes()).isZero();
      assertThat(reader.segmentsInUse()).isZero();

      // The segment lent out in a fetch's answer: the disk is busy serving, nothing is read ahead.
      ByteBuf held = reader.read(a, 0, 10, () -> true).get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(reader.warm(file, data.length, false).get(WAIT_SECONDS, TimeUnit.SECONDS))
          .isFalse();
      assertThat(reader.warmedBytes()).isEqualTo(data.length);
      held.release();
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  @Test
  void onlyTheLatestWarmUpsWaitAndClosingDropsThem() throws Exception {
    DiskReader reader = reader(1);
    Blocker first = new Blocker("first");
    CompletableFuture<ByteBuf> firstRead = reader.read(a, 0, 10, first);
    first.awaitServing();
    List<CompletableFuture<Boolean>> warms = new ArrayList<>();
    for (int i = 0; i <= DiskReader.MAX_QUEUED_WARMS; i++) {
      warms.add(reader.warm(b, 10));
    }
    // One too many: the oldest is pushed out at once, the others wait.
    assertThat(warms.get(0)).isCompletedWithValue(false);
    assertThat(warms.get(1)).isNotDone();

    CompletableFuture<Void> closing = CompletableFuture.runAsync(reader::close);
    Eventually.await("the waiting warm-ups dropped", () -> warms.get(warms.size() - 1).isDone());
    first.release();
    closing.get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertBytes(firstRead, a, 0, 10);
    assertThat(warms).allSatisfy(w -> assertThat(w).isCompletedWithValue(false));
    assertThat(reader.warm(b, 10)).isCompletedWithValue(false);
    assertThat(reader.warmedBytes() + reader.warmResidentBytes()).isZero();
  }

  @Test
  void aReadOfARunReadsAroundItsPieceAndTheWindowAfterAheadOfTheNextReads() throws Exception {
    Path run = root.resolve("run-0.data");
    writeRandom(run, 4 << 20, 21);
    try (DiskReader reader =
        new DiskReader(
            "test-reader", PAGE_CACHE, 1, 8L * DiskReader.SEGMENT_BYTES, 10_000, 1 << 20)) {
      // Two pieces of the run: the first one read reads the 1 MiB from its start around it.
      List<Extent> first = List.of(new Extent(run, 0, 100), new Extent(run, 300, 50));
      CompletableFuture<ByteBuf> read = reader.read(first, () -> true);
      ByteBuf bytes = read.get(WAIT_SECONDS, TimeUnit.SECONDS);
      byte[] all = Files.readAllBytes(run);
      byte[] want = new byte[150];
      System.arraycopy(all, 0, want, 0, 100);
      System.arraycopy(all, 300, want, 100, 50);
      assertThat(ByteBufUtil.getBytes(bytes)).isEqualTo(want);
      bytes.release();
      assertThat(reader.readsAround()).isEqualTo(1);
      assertThat(reader.readAroundBytes()).isEqualTo((1 << 20) - 100);
      // Then the next 1 MiB is queued behind the chunk reads, and read once the reader is idle.
      Eventually.await(
          "the window after to be read ahead",
          () -> reader.warmedBytes() + reader.warmResidentBytes() >= 1 << 20);
      // A piece in either window is read alone; one past them reads around again.
      assertBytes(
          reader.read(List.of(new Extent(run, 1_500_000, 100)), () -> true), run, 1_500_000, 100);
      assertThat(reader.readsAround()).isEqualTo(1);
      assertBytes(
          reader.read(List.of(new Extent(run, 2_500_000, 100)), () -> true), run, 2_500_000, 100);
      assertThat(reader.readsAround()).isEqualTo(2);
      assertThat(reader.segmentsInUse()).isZero();
    }
  }

  /** Writes {@code bytes} random bytes (from {@code seed}) to {@code file}; returns them. */
  private static byte[] writeRandom(Path file, int bytes, long seed) throws Exception {
    byte[] data = new byte[bytes];
    new Random(seed).nextBytes(data);
    Files.write(file, data);
    return data;
  }

  /** A read queued at {@code offset} of {@code file}. */
  private record Queued(Path file, long offset, CompletableFuture<ByteBuf> bytes) {}

  /** A reader whose pool holds every read a test queues at once: none waits for buffers. */
  private DiskReader reader(int threads) {
    return new DiskReader(
        "test-reader", PAGE_CACHE, threads, 8L * DiskReader.SEGMENT_BYTES, 10_000);
  }

  /** Records the read of {@code file} at {@code offset} as served when its turn comes. */
  private BooleanSupplier recording(Path file, long offset) {
    String name = file.getFileName().toString().substring(0, 1) + "@" + offset;
    return () -> {
      served.add(name);
      return true;
    };
  }

  /** A read's {@code stillWanted} that holds the reader thread until released. */
  private final class Blocker implements BooleanSupplier {
    private final String name;
    private final CountDownLatch serving = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    Blocker(String name) {
      this.name = name;
    }

    @Override
    public boolean getAsBoolean() {
      served.add(name);
      serving.countDown();
      try {
        return released.await(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }

    void awaitServing() throws InterruptedException {
      assertThat(serving.await(WAIT_SECONDS, TimeUnit.SECONDS))
          .as("a reader thread serves %s", name)
          .isTrue();
    }

    void release() {
      released.countDown();
    }
  }

  /** Checks the bytes {@code read} got, and releases them. */
  private static void assertBytes(
      CompletableFuture<ByteBuf> read, Path file, long offset, int length) throws Exception {
    ByteBuf bytes = read.get(WAIT_SECONDS, TimeUnit.SECONDS);
    try {
      assertThat(ByteBufUtil.getBytes(bytes))
          .as("%s at %d", file.getFileName(), offset)
          .isEqualTo(
              Arrays.copyOfRange(Files.readAllBytes(file), (int) offset, (int) offset + length));
    } finally {
      bytes.release();
    }
  }

  private static boolean hasFailedWith(CompletableFuture<ByteBuf> read, ErrorCode code) {
    if (!read.isCompletedExceptionally()) {
      return false;
    }
    Throwable cause = read.handle((bytes, error) -> error).join();
    return cause instanceof FaroException e && e.code() == code;
  }
}
