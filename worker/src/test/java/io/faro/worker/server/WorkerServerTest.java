package io.faro.worker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.batch.BatchDecoder;
import io.faro.common.batch.BatchFormat;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.testing.Eventually;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.CommittedPartitionP;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushStatusP;
import io.faro.worker.WorkerOptions;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.IoMode;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real worker on loopback ports with a fake master, driven the way the client will drive it. Its
 * disks do direct I/O; {@link WorkerServerBufferedIoTest} runs the same tests through the page
 * cache.
 */
class WorkerServerTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-e2e"), 4);

  @TempDir Path tmp;
  private FakeMaster master;
  private WorkerServer worker;
  private WorkerClient client;
  private Batches batches;

  @BeforeEach
  void setUp() {
    master = new FakeMaster();
    worker =
        new WorkerServer(
            TestWorkers.conf(master.endpoint(), tmp.resolve("disk0"), tmp.resolve("disk1"))
                .with(WorkerOptions.IO_MODE, ioMode())
                // These tests look at partition files: disk1 (an HDD) keeps them, not runs
                // (WorkerRunsLayoutTest covers runs).
                .with("faro.worker.tier.hdd.layout", "files"));
    worker.start();
    client = new WorkerClient("client-a", worker.endpoint());
    batches = new Batches(true, 7);
  }

  /** faro.worker.io.mode of the worker under test. */
  String ioMode() {
    return "direct";
  }

  /** What the worker's disks should do with {@link #ioMode()}. */
  IoMode expectedIoMode() {
    return IoMode.DIRECT;
  }

  @Test
  void itsDisksDoTheConfiguredIo() {
    assertThat(worker.diskIoModes()).containsExactly(expectedIoMode(), expectedIoMode());
  }

  @AfterEach
  void tearDown() {
    client.close();
    worker.close();
    master.close();
  }

  @Test
  void registersItsEndpointAndDisksThenHeartbeats() {
    assertThat(master.registrations()).hasSize(1);
    var registration = master.registrations().get(0);
    assertThat(registration.getWorkerId()).isEqualTo("127.0.0.1:" + worker.rpcPort());
    assertThat(worker.workerId().value()).isEqualTo(registration.getWorkerId());
    assertThat(registration.getEndpoint().getPushPort()).isEqualTo(worker.pushPort());
    assertThat(registration.getEndpoint().getFetchPort()).isEqualTo(worker.fetchPort());
    assertThat(registration.getDisksList())
        .extracting(d -> d.getTier().name())
        .containsExactly("SSD", "HDD");
    assertThat(registration.getDisks(1).getPath()).isEqualTo(tmp.resolve("disk1").toString());
    assertThat(registration.getDisks(0).getCapacityBytes()).isPositive();

    client.reserve(SHUFFLE, 0, 1, 3);
    Eventually.await(
        "a heartbeat listing the shuffle",
        () -> {
          var beat = master.lastHeartbeat(worker.workerId().value());
          return beat != null
              && beat.getShufflesCount() == 1
              && beat.getDisks(1).getActivePartitions() == 1;
        });
    assertThat(master.lastHeartbeat(worker.workerId().value()).getDisks(0).getUsableBytes())
        .isPositive();

    master.askToRegisterAgain();
    Eventually.await("a second registration", () -> master.registrations().size(), n -> n == 2);
  }

  /**
   * The whole path, from reservation to the last fetch, with JFR recording every file call of the
   * JVM: no event loop of the worker touches a file (pushes go to buffers, commits and fetches to
   * the disks' threads).
   */
  @Test
  void pushedBatchesFromTwoConnectionsComeBackPerPartitionInOrder() {
    try (io.faro.common.testing.EventLoopFileIo fileIo =
        io.faro.common.testing.EventLoopFileIo.record()) {
      pushCommitAndFetchFromTwoConnections();
      fileIo.assertNoneOnEventLoops();
    }
  }

  private void pushCommitAndFetchFromTwoConnections() {
    int partitions = 6;
    client.reserve(SHUFFLE, 0, 0, 0, 2, 4);
    client.reserve(SHUFFLE, 0, 1, 1, 3, 5);
    // expected.get(connection).get(partition): the batches that connection pushed, in order.
    List<Map<Integer, List<byte[]>>> expected = List.of(new HashMap<>(), new HashMap<>());
    try (WorkerClient second = new WorkerClient("client-b", worker.endpoint())) {
      List<WorkerClient> connections = List.of(client, second);
      CompletableFuture<?>[] pushers = new CompletableFuture<?>[2];
      for (int c = 0; c < 2; c++) {
        int connection = c;
        Batches source = new Batches(c == 0, 100 + c);
        pushers[c] =
            CompletableFuture.runAsync(
                () ->
                    pushFrames(
                        connections.get(connection),
                        connection,
                        source,
                        partitions,
                        expected.get(connection)));
      }
      WorkerClient.await(CompletableFuture.allOf(pushers), "pushes from two connections");
    }

    CommitFilesResponse commit = client.commit(SHUFFLE);

    assertThat(commit.getFailedPartitionIdsList()).isEmpty();
    assertThat(commit.getCommittedList())
        .extracting(CommittedPartitionP::getPartitionId)
        .containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5);
    for (CommittedPartitionP committed : commit.getCommittedList()) {
      PartitionKey key = new PartitionKey(SHUFFLE, committed.getPartitionId(), 0);
      byte[] data = client.fetchAll(key);
      assertThat((long) data.length).isEqualTo(committed.getBytes());
      assertThat(client.openStream(key)).hasSize(committed.getChunks() + 1);
      Map<Integer, List<byte[]>> fetchedByConnection = splitBatchesByMap(data);
      for (int c = 0; c < 2; c++) {
        List<byte[]> pushed = expected.get(c).getOrDefault(key.partition(), List.of());
        List<byte[]> fetched = fetchedByConnection.getOrDefault(c, List.of());
        assertThat(fetched)
            .as("batches of connection %d in partition %d", c, key.partition())
            .hasSameSizeAs(pushed);
        for (int i = 0; i < pushed.size(); i++) {
          assertThat(fetched.get(i)).isEqualTo(pushed.get(i));
        }
      }
      // Every chunk verifies on its own (CRC, structure).
      new BatchDecoder()
          .decode(Unpooled.wrappedBuffer(data), key.toString(), (m, a, b) -> true, b -> {});
    }
    assertThat(commit.getCommittedList())
        .anySatisfy(c -> assertThat(c.getChunks()).isGreaterThan(2));
    Eventually.await(
        "every flushed byte released", () -> worker.memoryBudget().used(), used -> used == 0);
  }

  /** Pushes 30 frames of 3 parts (1 to 3 batches each), waiting for each answer. */
  private static void pushFrames(
      WorkerClient connection,
      int mapId,
      Batches source,
      int partitions,
      Map<Integer, List<byte[]>> expected) {
    int batchId = 0;
    for (int frame = 0; frame < 30; frame++) {
      List<Part> parts = new ArrayList<>();
      for (int p = 0; p < 3; p++) {
        int partition = source.random().nextInt(partitions);
        ByteArrayOutputStream part = new ByteArrayOutputStream();
        for (int b = 1 + source.random().nextInt(3); b > 0; b--) {
          byte[] batch =
              source.batchBytes(mapId, 0, batchId++, 200 + source.random().nextInt(1500));
          expected.computeIfAbsent(partition, k -> new ArrayList<>()).add(batch);
          part.writeBytes(batch);
        }
        parts.add(new Part(partition, 0, part.toByteArray()));
      }
      assertThat(connection.push(SHUFFLE, parts)).containsOnly(PushStatusP.OK).hasSize(3);
    }
  }

  /** Splits partition data into raw batches by their header, grouped by map id in file order. */
  private static Map<Integer, List<byte[]>> splitBatchesByMap(byte[] data) {
    Map<Integer, List<byte[]>> byMap = new HashMap<>();
    ByteBuffer buffer = ByteBuffer.wrap(data);
    int pos = 0;
    while (pos < data.length) {
      int length = BatchFormat.HEADER + buffer.getInt(pos + BatchFormat.DATA_LENGTH);
      byMap
          .computeIfAbsent(buffer.getInt(pos + BatchFormat.MAP_ID), k -> new ArrayList<>())
          .add(Arrays.copyOfRange(data, pos, pos + length));
      pos += length;
    }
    return byMap;
  }

  @Test
  void answersNotHereStageEndedAndCommitsIdempotently() {
    client.reserve(SHUFFLE, 0, 0, 0, 1);
    byte[] batch = batches.batchBytes(1, 0, 0, 500);
    assertThat(
            client.push(
                SHUFFLE,
                List.of(new Part(0, 0, batch), new Part(7, 0, batch), new Part(0, 1, batch))))
        .containsExactly(PushStatusP.OK, PushStatusP.NOT_HERE, PushStatusP.NOT_HERE);
    ShuffleId unknownShuffle = new ShuffleId(SHUFFLE.app(), 99);
    assertThat(client.push(unknownShuffle, List.of(new Part(0, 0, batch))))
        .containsExactly(PushStatusP.NOT_HERE);

    CommitFilesResponse first = client.commit(SHUFFLE);

    assertThat(first.getCommittedList())
        .containsExactly(
            CommittedPartitionP.newBuilder()
                .setPartitionId(0)
                .setEpoch(0)
                .setBytes(batch.length)
                .setChunks(1)
                .build(),
            CommittedPartitionP.newBuilder()
                .setPartitionId(1)
                .setEpoch(0)
                .setBytes(0)
                .setChunks(0)
                .build());
    assertThat(client.commit(SHUFFLE)).isEqualTo(first);
    assertThat(client.push(SHUFFLE, List.of(new Part(0, 0, batch), new Part(5, 0, batch))))
        .containsExactly(PushStatusP.STAGE_ENDED, PushStatusP.STAGE_ENDED);
    assertThat(client.fetchAll(new PartitionKey(SHUFFLE, 0, 0))).isEqualTo(batch);
    assertThat(client.openStream(new PartitionKey(SHUFFLE, 1, 0))).containsExactly(0L);
    assertThat(client.commit(unknownShuffle).getCommittedCount()).isZero();
  }

  @Test
  void fetchErrorsNameTheirCause() {
    client.reserve(SHUFFLE, 0, 0, 0);
    client.push(SHUFFLE, List.of(new Part(0, 0, batches.batchBytes(1, 0, 0, 100))));
    PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);

    assertError(() -> client.openStream(key), ErrorCode.SHUFFLE_NOT_COMMITTED, key.toString());
    assertError(
        () -> client.openStream(new PartitionKey(SHUFFLE, 3, 0)),
        ErrorCode.UNKNOWN_PARTITION,
        "p3e0");
    client.commit(SHUFFLE);
    assertError(() -> client.fetchChunk(key, 1), ErrorCode.INVALID_REQUEST, "no chunk 1");
    assertError(() -> client.fetchChunk(key, -1), ErrorCode.INVALID_REQUEST, "no chunk -1");
    assertThat(client.fetchChunk(key, 0)).hasSize(BatchFormat.HEADER + 100);
  }

  @Test
  void aChunkLargerThanTheReadBuffersIsStillServed() {
    // 3m of read buffers per disk serve chunks up to 3m - 8k; one pushed part of 4m makes a
    // chunk of its own that size (chunks end at part boundaries).
    try (WorkerServer small =
            new WorkerServer(
                TestWorkers.conf(master.endpoint(), tmp.resolve("small0"))
                    .with(WorkerOptions.IO_MODE, ioMode())
                    .with(WorkerOptions.IO_READ_BUFFER_PER_DISK, "3m"));
        WorkerClient smallClient = startAndConnect(small)) {
      smallClient.reserve(SHUFFLE, 0, 0, 0);
      byte[] big = batches.batchBytes(1, 0, 0, 4 << 20);
      byte[] little = batches.batchBytes(1, 0, 1, 100);
      smallClient.push(SHUFFLE, List.of(new Part(0, 0, big)));
      smallClient.push(SHUFFLE, List.of(new Part(0, 0, little)));
      smallClient.commit(SHUFFLE);
      PartitionKey key = new PartitionKey(SHUFFLE, 0, 0);

      assertThat(smallClient.fetchChunk(key, 0)).isEqualTo(big);
      assertThat(smallClient.fetchChunk(key, 1)).isEqualTo(little);
    }
  }

  private static WorkerClient startAndConnect(WorkerServer server) {
    server.start();
    return new WorkerClient("client-small", server.endpoint());
  }

  @Test
  void aMissingOrShortFileIsAnErrorAnswerAndTheConnectionGoesOn() throws Exception {
    client.reserve(SHUFFLE, 0, 0, 0, 1);
    byte[] batch = batches.batchBytes(1, 0, 0, 1000);
    client.push(SHUFFLE, List.of(new Part(0, 0, batch), new Part(1, 0, batch)));
    client.commit(SHUFFLE);
    PartitionKey gone = new PartitionKey(SHUFFLE, 0, 0);
    PartitionKey shortened = new PartitionKey(SHUFFLE, 1, 0);
    Files.delete(FileLayout.partitionFile(tmp.resolve("disk0"), gone));
    try (var channel =
        java.nio.channels.FileChannel.open(
            FileLayout.partitionFile(tmp.resolve("disk0"), shortened),
            java.nio.file.StandardOpenOption.WRITE)) {
      channel.truncate(10);
    }

    assertError(() -> client.fetchChunk(gone, 0), ErrorCode.STORAGE_FAILED, "cannot open");
    assertError(() -> client.fetchChunk(shortened, 0), ErrorCode.STORAGE_FAILED, "has 10 bytes");
    // The same connection still serves: other reducers sharing it are not hurt.
    assertThat(client.openStream(gone)).hasSize(2);
  }

  @Test
  void aMalformedPartRejectsTheWholeFrameAndTheConnectionGoesOn() {
    client.reserve(SHUFFLE, 0, 0, 0, 1);
    byte[] good = batches.batchBytes(1, 0, 0, 300);
    byte[] bad = good.clone();
    ByteBuffer.wrap(bad).putInt(BatchFormat.DATA_LENGTH, 1 << 20); // declares more than it has

    assertError(
        () -> client.push(SHUFFLE, List.of(new Part(1, 0, good), new Part(0, 0, bad))),
        ErrorCode.DATA_CORRUPTED,
        "part 1 (partition 0 epoch 0");
    // Lengths that do not add up to the body.
    var request =
        PushRequest.newBuilder()
            .setShuffle(WorkerClient.key(SHUFFLE))
            .addParts(PushPart.newBuilder().setPartitionId(0).setLength(good.length + 1))
            .build();
    assertError(
        () -> WorkerClient.await(client.pushRaw(request, Unpooled.wrappedBuffer(good)), "push"),
        ErrorCode.DATA_CORRUPTED,
        "frame body has " + good.length);
    assertError(
        () -> client.push(new ShuffleId(SHUFFLE.app(), 0), List.of(new Part(-1, 0, good))),
        ErrorCode.INVALID_REQUEST,
        "bad partition -1");
    // An empty part would pin its frame's memory until its partition flushed: refused too.
    assertError(
        () -> client.push(SHUFFLE, List.of(new Part(0, 0, good), new Part(1, 0, new byte[0]))),
        ErrorCode.DATA_CORRUPTED,
        "declares length 0");

    // A primary's forward must give a chunk size that faro.worker.chunk.size could have.
    var forward =
        PushRequest.newBuilder()
            .setShuffle(WorkerClient.key(SHUFFLE))
            .setReplica(true)
            .setChunkSize(10)
            .addParts(PushPart.newBuilder().setPartitionId(0).setLength(good.length))
            .build();
    assertError(
        () -> WorkerClient.await(client.pushRaw(forward, Unpooled.wrappedBuffer(good)), "push"),
        ErrorCode.DATA_CORRUPTED,
        "chunk size 10");

    assertThat(client.push(SHUFFLE, List.of(new Part(0, 0, good)))).containsExactly(PushStatusP.OK);
    CommitFilesResponse commit = client.commit(SHUFFLE);
    assertThat(commit.getCommittedList())
        .extracting(CommittedPartitionP::getBytes)
        .as("nothing of the refused frames was appended")
        .containsExactly((long) good.length, 0L);
  }

  @Test
  void aForwardedFrameIsCutByItsPrimarysChunkSizeNotThisWorkers() {
    client.reserve(SHUFFLE, 0, 0, 0, 1);
    byte[] batch = batches.batchBytes(1, 0, 0, 1500);
    for (int i = 0; i < 4; i++) {
      // Partition 0 as a primary forwards it (with a 1k chunk size); partition 1 as a client
      // pushes.
      var forward =
          PushRequest.newBuilder()
              .setShuffle(WorkerClient.key(SHUFFLE))
              .setReplica(true)
              .setChunkSize(1024)
              .addParts(PushPart.newBuilder().setPartitionId(0).setLength(batch.length))
              .build();
      assertThat(
              WorkerClient.await(client.pushRaw(forward, Unpooled.wrappedBuffer(batch)), "push")
                  .getStatusesList())
          .containsExactly(PushStatusP.OK);
      assertThat(client.push(SHUFFLE, List.of(new Part(1, 0, batch))))
          .containsExactly(PushStatusP.OK);
    }
    client.commit(SHUFFLE);

    assertThat(batch.length).isGreaterThan(1024).isLessThan(16 * 1024 / 4);
    assertThat(client.openStream(new PartitionKey(SHUFFLE, 0, 0)))
        .as("a chunk per part: cut by 1k")
        .hasSize(5);
    assertThat(client.openStream(new PartitionKey(SHUFFLE, 1, 0)))
        .as("one chunk: cut by this worker's 16k")
        .hasSize(2);
  }

  @Test
  void aGarbageFrameClosesOnlyThatConnection() throws Exception {
    client.reserve(SHUFFLE, 0, 0, 0);
    try (Socket socket = new Socket("127.0.0.1", worker.pushPort())) {
      socket.setSoTimeout(10_000);
      // A frame length below the fixed header: the decoder refuses it at once.
      socket.getOutputStream().write(new byte[] {0, 0, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8});
      socket.getOutputStream().flush();
      assertThat(socket.getInputStream().read())
          .as("the worker closed the connection")
          .isEqualTo(-1);
    }
    assertThat(client.push(SHUFFLE, List.of(new Part(0, 0, batches.batchBytes(1, 0, 0, 100)))))
        .containsExactly(PushStatusP.OK);
    assertThat(client.commit(SHUFFLE).getCommittedCount()).isEqualTo(1);
  }

  @Test
  void anExpiredShuffleLosesItsFilesAndDirectories() {
    client.reserve(SHUFFLE, 0, 0, 0);
    client.reserve(SHUFFLE, 0, 1, 1);
    byte[] batch = batches.batchBytes(1, 0, 0, 20_000);
    client.push(SHUFFLE, List.of(new Part(0, 0, batch), new Part(1, 0, batch)));
    client.commit(SHUFFLE);
    Path file0 = FileLayout.partitionFile(tmp.resolve("disk0"), new PartitionKey(SHUFFLE, 0, 0));
    Path file1 = FileLayout.partitionFile(tmp.resolve("disk1"), new PartitionKey(SHUFFLE, 1, 0));
    assertThat(file0).isRegularFile();
    assertThat(file1).isRegularFile();

    master.expire(SHUFFLE);

    Eventually.await(
        "the app directories to be deleted",
        () ->
            !Files.exists(FileLayout.appDir(tmp.resolve("disk0"), SHUFFLE.app()))
                && !Files.exists(FileLayout.appDir(tmp.resolve("disk1"), SHUFFLE.app())));
    assertError(
        () -> client.openStream(new PartitionKey(SHUFFLE, 0, 0)),
        ErrorCode.UNKNOWN_PARTITION,
        "p0e0");
    assertThat(client.push(SHUFFLE, List.of(new Part(0, 0, batch))))
        .containsExactly(PushStatusP.NOT_HERE);
    Eventually.await(
        "heartbeats without the shuffle",
        () -> master.lastHeartbeat(worker.workerId().value()).getShufflesCount() == 0);
  }

  @Test
  void aPartitionWhoseFileFailsIsReportedAsFailed() throws Exception {
    ShuffleId shuffle = new ShuffleId(new AppId("app-broken-disk"), 0);
    Files.writeString(
        FileLayout.appDir(tmp.resolve("disk1"), shuffle.app()), "a file where a directory goes");
    client.reserve(shuffle, 0, 0, 0);
    client.reserve(shuffle, 0, 1, 1);
    byte[] batch = batches.batchBytes(1, 0, 0, 10_000);
    client.push(shuffle, List.of(new Part(0, 0, batch), new Part(1, 0, batch)));

    CommitFilesResponse commit = client.commit(shuffle);

    assertThat(commit.getFailedPartitionIdsList()).containsExactly(1);
    assertThat(commit.getCommittedList())
        .extracting(CommittedPartitionP::getPartitionId)
        .containsExactly(0);
    assertError(
        () -> client.openStream(new PartitionKey(shuffle, 1, 0)), ErrorCode.STORAGE_FAILED, "p1e0");
    assertThat(client.fetchAll(new PartitionKey(shuffle, 0, 0))).isEqualTo(batch);
  }

  @Test
  void requestsOnTheWrongPortAreRefused() {
    try (WorkerClient wrongPorts =
        new WorkerClient(
            "client-wrong",
            new WorkerEndpoint(
                "127.0.0.1", worker.fetchPort(), worker.rpcPort(), worker.pushPort()))) {
      assertError(() -> wrongPorts.commit(SHUFFLE), ErrorCode.UNSUPPORTED_MESSAGE, "fetch port");
      assertError(
          () -> wrongPorts.push(SHUFFLE, List.of()), ErrorCode.UNSUPPORTED_MESSAGE, "RPC port");
      assertError(
          () -> wrongPorts.openStream(new PartitionKey(SHUFFLE, 0, 0)),
          ErrorCode.UNSUPPORTED_MESSAGE,
          "push port");
    }
  }

  @Test
  void reservingADiskTheWorkerDoesNotHaveFails() {
    assertError(
        () -> client.reserve(SHUFFLE, 0, 2, 0), ErrorCode.INVALID_REQUEST, "faro.worker.dirs");
  }

  static void assertError(Runnable call, ErrorCode code, String messagePart) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(FaroException.class, e -> assertThat(e.code()).isEqualTo(code))
        .hasMessageContaining(messagePart);
  }

  private static void assertError(ThrowingCall call, ErrorCode code, String messagePart) {
    assertError((Runnable) () -> call.run(), code, messagePart);
  }

  @FunctionalInterface
  private interface ThrowingCall {
    Object run();
  }
}
