package io.faro.client.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.client.ClientSettings;
import io.faro.client.ReadRange;
import io.faro.client.protocol.ExecutorProto;
import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchEncoder;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.Role;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.TransportServer;
import io.faro.proto.CommittedFileP;
import io.faro.proto.FetchChunkResponse;
import io.faro.proto.GetReducerFileGroupsResponse;
import io.faro.proto.MessageType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reader against a hand-written fetch server on loopback that serves one chunk (three batches
 * of map 0, unless a test writes another), after answering "busy" (TIMEOUT) a chosen number of
 * times.
 */
class PartitionReaderTest {
  private static final AppId APP = new AppId("reader-test");
  private final AtomicInteger busyAnswersLeft = new AtomicInteger();
  private final AtomicInteger requests = new AtomicInteger();
  private ByteBuf chunk;
  private TransportServer server;
  private ClientPool pool;
  private ClientSettings settings;

  @BeforeEach
  void start() {
    BatchEncoder encoder = new BatchEncoder(true, io.netty.buffer.UnpooledByteBufAllocator.DEFAULT);
    chunk = Unpooled.buffer();
    for (int b = 0; b < 3; b++) {
      byte[] raw = ("batch " + b).getBytes(StandardCharsets.UTF_8);
      ByteBuf batch = encoder.encode(0, 0, b, raw, 0, raw.length);
      chunk.writeBytes(batch);
      batch.release();
    }
    settings =
        ClientSettings.from(
            FaroConf.of(
                Map.of(
                    "faro.client.fetch.retries",
                    "1",
                    "faro.client.fetch.retry.wait",
                    "5ms",
                    // The fake worker asks no proof (authentication is tested elsewhere).
                    "faro.auth.enabled",
                    "false")));
    server =
        new TransportServer(
            "fake-fetch",
            "127.0.0.1",
            0,
            "faro.worker.fetch.port",
            settings.network(),
            (request, responder) -> {
              requests.incrementAndGet();
              if (request.type() != MessageType.FETCH_CHUNK_REQUEST) {
                responder.fail(ErrorCode.UNSUPPORTED_MESSAGE, "only fetches here");
              } else if (busyAnswersLeft.getAndDecrement() > 0) {
                responder.fail(ErrorCode.TIMEOUT, "every read buffer of the disk is in use");
              } else {
                responder.respond(
                    FetchChunkResponse.newBuilder().setChunkIndex(0).build(),
                    chunk.retainedDuplicate());
              }
            },
            null);
    pool = new ClientPool("reader-test", settings.network());
  }

  @AfterEach
  void stop() {
    pool.close();
    server.close();
    chunk.release();
  }

  private ReducerFileGroups groups(long expectedBatches) {
    WorkerEndpoint endpoint =
        new WorkerEndpoint("127.0.0.1", server.port(), server.port(), server.port());
    PartitionLocation location =
        new PartitionLocation(0, 0, Role.PRIMARY, new WorkerId("fake"), endpoint, 0);
    return ExecutorProto.fileGroups(
        APP,
        GetReducerFileGroupsResponse.newBuilder()
            .setFaroShuffleId(0)
            .setStartPartition(0)
            .setEndPartition(1)
            .addWinningAttempts(0)
            .addFiles(
                CommittedFileP.newBuilder()
                    .setLocation(IdMapper.toProto(location))
                    .setBytes(chunk.readableBytes())
                    .setChunks(1))
            .addExpectedBatches(expectedBatches)
            .build());
  }

  private int readAll(PartitionReader reader) {
    int batches = 0;
    for (Batch b; (b = reader.next()) != null; ) {
      assertThat(new String(b.data(), 0, b.length(), StandardCharsets.UTF_8))
          .isEqualTo("batch " + b.batchId());
      batches++;
    }
    return batches;
  }

  @Test
  void aBusyWorkerIsAskedAgainWithoutItsCopyCountingAsFailed() {
    // One retry per copy and one copy: three failures would lose the partition; busy ones do not.
    busyAnswersLeft.set(5);
    try (PartitionReader reader =
        new PartitionReader(groups(3), new ReadRange(0, 1, 0, 1), pool, settings)) {
      assertThat(readAll(reader)).isEqualTo(3);
      assertThat(reader.fetchRetries()).isEqualTo(5);
    }
  }

  @Test
  void aWorkerBusyForeverIsGivenUpOn() {
    busyAnswersLeft.set(1_000);
    try (PartitionReader reader =
        new PartitionReader(groups(3), new ReadRange(0, 1, 0, 1), pool, settings)) {
      assertThatThrownBy(() -> readAll(reader))
          .isInstanceOfSatisfying(
              FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATA_LOST));
      assertThat(requests.get()).isBetween(11, 14);
    }
  }

  @Test
  void readingFewerBatchesThanTheWinnersPushedIsDataLost() {
    try (PartitionReader reader =
        new PartitionReader(groups(4), new ReadRange(0, 1, 0, 1), pool, settings)) {
      assertThatThrownBy(() -> readAll(reader))
          .isInstanceOfSatisfying(
              FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATA_LOST))
          .hasMessageContaining("pushed 4 batches but 3");
    }
    // A reader of a map range cannot check per-partition totals; it reads what is there.
    try (PartitionReader reader =
        new PartitionReader(groups(4), new ReadRange(0, 1, 0, 0), pool, settings)) {
      assertThat(readAll(reader)).isZero();
    }
  }

  @Test
  void keepsEachBatchOfEachWinningAttemptOnceAndNothingElse() {
    BatchEncoder encoder = new BatchEncoder(true, io.netty.buffer.UnpooledByteBufAllocator.DEFAULT);
    ByteBuf mixed = Unpooled.buffer();
    // {map, attempt, batch}: what a partition file holds after retries, a losing attempt and a
    // zombie of an older stage attempt pushed to it.
    int[][] written = {
      {0, 0, 0}, {0, 0, 1},
      {0, 0, 1}, // pushed again after an answer was lost: the same batch twice
      {0, 1, 0}, // a speculative attempt of map 0 that lost
      {1, 0, 0}, // map 1's first attempt, which lost to attempt 2
      {1, 2, 0}, {1, 2, 1}, {7, 0, 0}, // a map outside the shuffle's range
    };
    for (int[] w : written) {
      byte[] raw = ("m" + w[0] + " a" + w[1] + " b" + w[2]).getBytes(StandardCharsets.UTF_8);
      ByteBuf batch = encoder.encode(w[0], w[1], w[2], raw, 0, raw.length);
      mixed.writeBytes(batch);
      batch.release();
    }
    chunk.release();
    chunk = mixed;
    WorkerEndpoint endpoint =
        new WorkerEndpoint("127.0.0.1", server.port(), server.port(), server.port());
    PartitionLocation location =
        new PartitionLocation(0, 0, Role.PRIMARY, new WorkerId("fake"), endpoint, 0);
    ReducerFileGroups groups =
        ExecutorProto.fileGroups(
            APP,
            GetReducerFileGroupsResponse.newBuilder()
                .setFaroShuffleId(0)
                .setStartPartition(0)
                .setEndPartition(1)
                .addWinningAttempts(0)
                .addWinningAttempts(2)
                .addFiles(
                    CommittedFileP.newBuilder()
                        .setLocation(IdMapper.toProto(location))
                        .setBytes(chunk.readableBytes())
                        .setChunks(1))
                .addExpectedBatches(4)
                .build());

    try (PartitionReader reader =
        new PartitionReader(groups, new ReadRange(0, 1, 0, 2), pool, settings)) {
      assertThat(contents(reader)).containsExactly("m0 a0 b0", "m0 a0 b1", "m1 a2 b0", "m1 a2 b1");
    }
    // A sub-read of a map range (a skewed partition split by the engine) keeps only its maps.
    try (PartitionReader reader =
        new PartitionReader(groups, new ReadRange(0, 1, 1, 2), pool, settings)) {
      assertThat(contents(reader)).containsExactly("m1 a2 b0", "m1 a2 b1");
    }
  }

  private static List<String> contents(PartitionReader reader) {
    List<String> seen = new ArrayList<>();
    for (Batch b; (b = reader.next()) != null; ) {
      seen.add(new String(b.data(), 0, b.length(), StandardCharsets.UTF_8));
    }
    return seen;
  }
}
