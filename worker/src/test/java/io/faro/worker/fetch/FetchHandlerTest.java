package io.faro.worker.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.TransportServer;
import io.faro.common.testing.EventLoopFileIo;
import io.faro.common.testing.Eventually;
import io.faro.worker.WorkerOptions;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.PushStatus;
import io.faro.worker.partition.Reservation;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.DiskReader;
import io.faro.worker.storage.DiskThreads;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.IoMode;
import io.faro.worker.storage.ReadAhead;
import io.faro.worker.testing.WorkerClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fetch port over a disk written through the page cache: chunks are read by the disk's reader
 * into its pooled buffers, like on a disk with direct I/O (faro.worker.fetch.zero.copy false, as
 * most tests here run), or, with zero copy, sent from their files when the reader finds them in the
 * page cache (a file just written always is).
 */
class FetchHandlerTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-fetch"), 2);
  private static final long FLUSH = 4 * 1024;
  private static final long CHUNK = 16 * 1024;

  @TempDir Path root;
  private Disks disks;
  private ScheduledExecutorService memoryThread;
  private MemoryBudget budget;
  private PartitionStore store;
  private TransportServer server;
  private final List<WorkerClient> clients = new ArrayList<>();

  @BeforeEach
  void setUp() {
    // One segment of read buffers: a read of up to 1 MiB - 2 bytes at a time.
    open(DiskReader.SEGMENT_BYTES, false);
  }

  /**
   * Opens the disk with {@code readBuffers} bytes of read buffers, a store and a fetch port that
   * sends chunks from the page cache with {@code zeroCopy}.
   */
  private void open(long readBuffers, boolean zeroCopy) {
    disks =
        Disks.open(
            List.of(new DiskDir(root.resolve("d0"), DiskTier.HDD)),
            new Disks.Options(
                Disks.Options.everyTier(new DiskThreads(1, 1)), IoMode.BUFFERED, readBuffers, 5000),
            "test");
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    budget = new MemoryBudget(1L << 30, 1L << 29, () -> store.flushBuffered(), memoryThread);
    store = new PartitionStore(disks, new WriterSettings(FLUSH, CHUNK));
    server =
        new TransportServer(
            "test-fetch",
            "127.0.0.1",
            0,
            WorkerOptions.FETCH_PORT.key(),
            NetworkSettings.from(FaroConf.empty().with("faro.auth.enabled", "false")),
            // Two files ahead of the highest partition fetched.
            new FetchHandler(store, new ReadAhead.Limits(2, 1L << 30), zeroCopy),
            null);
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    close();
  }

  private void close() throws InterruptedException {
    clients.forEach(WorkerClient::close);
    clients.clear();
    server.close();
    store.close();
    disks.close();
    memoryThread.shutdownNow();
    memoryThread.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void aBufferedDiskServesChunksThroughItsReader() {
    assertThat(disks.get(0).ioMode()).isEqualTo(IoMode.BUFFERED);
    DiskReader reader = disks.get(0).reader();
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    byte[] expected = appendRandomParts(key, 60, new Random(21));
    store.commit(SHUFFLE).join();
    WorkerClient client = client("reducer");

    assertThat(client.openStream(key)).hasSizeGreaterThan(3);
    assertThat(client.fetchAll(key)).isEqualTo(expected);
    // Every chunk came off the disk through the reader, once.
    assertThat(reader.readBytes()).isEqualTo(expected.length);
    assertThat(reader.readNanos()).isPositive();
    Eventually.await("every read buffer back in the pool", () -> reader.segmentsInUse() == 0);
  }

  @Test
  void aChunkInThePageCacheIsSentFromItsFileWithoutTheReadersBuffers() throws Exception {
    close();
    open(DiskReader.SEGMENT_BYTES, true);
    DiskReader reader = disks.get(0).reader();
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    byte[] expected = appendRandomParts(key, 60, new Random(23));
    store.commit(SHUFFLE).join();
    WorkerClient client = client("reducer");

    assertThat(client.openStream(key)).hasSizeGreaterThan(3);
    assertThat(client.fetchAll(key)).isEqualTo(expected);
    // Every chunk went out as a region of the file just written (resident): none was read here.
    assertThat(reader.regionBytes()).isEqualTo(expected.length);
    assertThat(reader.readBytes()).isZero();
    assertThat(reader.segmentsInUse()).isZero();
    assertThat(store.counters().fetchedBytes()).isEqualTo(expected.length);
  }

  @Test
  void concurrentFetchesShareTheBoundedPoolAndGiveItBack() {
    DiskReader reader = disks.get(0).reader();
    int partitions = 4;
    List<byte[]> expected = new ArrayList<>();
    List<Reservation> reservations = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      reservations.add(new Reservation(p, 0, 0));
    }
    store.reserve(SHUFFLE, reservations);
    Random random = new Random(22);
    for (int p = 0; p < partitions; p++) {
      expected.add(appendRandomParts(new PartitionKey(SHUFFLE, p, 0), 40, random));
    }
    store.commit(SHUFFLE).join();

    // Two connections, each fetching every partition at once: their reads queue on the disk and
    // take turns with its one segment.
    List<CompletableFuture<byte[]>> fetches = new ArrayList<>();
    for (WorkerClient client : List.of(client("reducer-a"), client("reducer-b"))) {
      for (int p = 0; p < partitions; p++) {
        PartitionKey key = new PartitionKey(SHUFFLE, p, 0);
        fetches.add(CompletableFuture.supplyAsync(() -> client.fetchAll(key)));
      }
    }
    for (int i = 0; i < fetches.size(); i++) {
      assertThat(WorkerClient.await(fetches.get(i), "fetch " + i))
          .isEqualTo(expected.get(i % partitions));
    }
    assertThat(reader.readBytes())
        .isEqualTo(2L * expected.stream().mapToLong(bytes -> bytes.length).sum());
    Eventually.await("every read buffer back in the pool", () -> reader.segmentsInUse() == 0);
    assertThat(reader.queuedReads()).isZero();
  }

  /**
   * A chunk larger than the disk's read buffers (one huge pushed part) is read on the disk's reader
   * threads too, into a buffer of its own, and no event loop touches a file for it: JFR records
   * every file call of the JVM meanwhile (the reads on the reader threads prove it looks).
   */
  @Test
  void aChunkLargerThanTheReadBuffersIsReadOnTheReaderThreadsNeverOnAnEventLoop() {
    DiskReader reader = disks.get(0).reader();
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    // Parts of 2 and 3 MiB make chunks of their own (chunks end at part boundaries), larger than
    // the reader's one segment; the small one after them is a chunk the pool serves.
    byte[] big = new byte[2 * DiskReader.SEGMENT_BYTES];
    byte[] bigger = new byte[3 * DiskReader.SEGMENT_BYTES];
    byte[] little = new byte[100];
    Random random = new Random(23);
    random.nextBytes(big);
    random.nextBytes(bigger);
    random.nextBytes(little);
    append(key, big);
    append(key, bigger);
    append(key, little);
    store.commit(SHUFFLE).join();
    WorkerClient client = client("reducer");

    try (EventLoopFileIo fileIo = EventLoopFileIo.record()) {
      // Both large ones at once: the disk reads one such chunk at a time.
      CompletableFuture<byte[]> first =
          CompletableFuture.supplyAsync(() -> client.fetchChunk(key, 0));
      CompletableFuture<byte[]> second =
          CompletableFuture.supplyAsync(() -> client.fetchChunk(key, 1));
      assertThat(WorkerClient.await(first, "chunk 0")).isEqualTo(big);
      assertThat(WorkerClient.await(second, "chunk 1")).isEqualTo(bigger);
      assertThat(client.fetchChunk(key, 2)).isEqualTo(little);
      assertThat(reader.readBytes()).isEqualTo(big.length + bigger.length + little.length);

      fileIo.assertNoneOnEventLoops();
      assertThat(fileIo.countOn(java.util.regex.Pattern.compile("test-reader-d0-.*")))
          .as("file reads on the disk's reader threads, seen by the detector")
          .isPositive();
    }
    Eventually.await("every read buffer back in the pool", () -> reader.segmentsInUse() == 0);
  }

  @Test
  void aFetchReadsTheFilesAfterTheHighestPartitionFetchedAheadOnceEachSkippingReplicas()
      throws InterruptedException {
    // Read buffers to spare: a file the page cache lost is read ahead into a free one.
    close();
    open(8L * DiskReader.SEGMENT_BYTES, false);
    DiskReader reader = disks.get(0).reader();
    // Partitions 0 to 5 are here; 2 is a replica copy, read only if its primary were lost.
    List<Reservation> reservations = new ArrayList<>();
    for (int p = 0; p < 6; p++) {
      reservations.add(
          p == 2
              ? new Reservation(p, 0, 0, java.util.Optional.empty(), true)
              : new Reservation(p, 0, 0));
    }
    store.reserve(SHUFFLE, reservations);
    long[] bytes = new long[6];
    Random random = new Random(24);
    for (int p = 0; p < 6; p++) {
      bytes[p] = appendRandomParts(new PartitionKey(SHUFFLE, p, 0), 10, random).length;
    }
    store.commit(SHUFFLE).join();
    WorkerClient client = client("reducer");

    client.fetchAll(new PartitionKey(SHUFFLE, 0, 0));
    awaitReadAhead(reader, bytes[1] + bytes[3]);
    client.fetchAll(new PartitionKey(SHUFFLE, 1, 0));
    awaitReadAhead(reader, bytes[1] + bytes[3] + bytes[4]);
    // Behind the frontier (a retried reducer): nothing; then the last one, once.
    client.fetchAll(new PartitionKey(SHUFFLE, 0, 0));
    client.fetchAll(new PartitionKey(SHUFFLE, 3, 0));
    awaitReadAhead(reader, bytes[1] + bytes[3] + bytes[4] + bytes[5]);
    client.fetchAll(new PartitionKey(SHUFFLE, 5, 0));
    client.fetchAll(new PartitionKey(SHUFFLE, 4, 0));
    // Read-ahead waits behind chunk reads on the one reader thread: queued after the fetches
    // above, a read-ahead would be done by the time of this one's.
    client.fetchAll(new PartitionKey(SHUFFLE, 1, 0));
    assertThat(reader.warmedBytes() + reader.warmResidentBytes())
        .isEqualTo(bytes[1] + bytes[3] + bytes[4] + bytes[5]);
  }

  /** Waits until {@code reader} has read ahead {@code bytes} in all, and checks not more. */
  private static void awaitReadAhead(DiskReader reader, long bytes) {
    Eventually.await(
        "read ahead " + bytes + " bytes",
        () -> reader.warmedBytes() + reader.warmResidentBytes() >= bytes);
    assertThat(reader.warmedBytes() + reader.warmResidentBytes()).isEqualTo(bytes);
  }

  private WorkerClient client(String name) {
    WorkerClient client =
        new WorkerClient(name, new WorkerEndpoint("127.0.0.1", 0, 0, server.port()));
    clients.add(client);
    return client;
  }

  /** Appends {@code parts} parts of random sizes and bytes to {@code key}; returns their bytes. */
  private byte[] appendRandomParts(PartitionKey key, int parts, Random random) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (int i = 0; i < parts; i++) {
      byte[] bytes = new byte[1 + random.nextInt(3000)];
      random.nextBytes(bytes);
      append(key, bytes);
      all.writeBytes(bytes);
    }
    return all.toByteArray();
  }

  private void append(PartitionKey key, byte[] bytes) {
    ByteBuf part = Unpooled.wrappedBuffer(Arrays.copyOf(bytes, bytes.length));
    assertThat(store.append(key, part, new FrameCharge(budget, bytes.length, 1)))
        .isEqualTo(PushStatus.OK);
  }
}
