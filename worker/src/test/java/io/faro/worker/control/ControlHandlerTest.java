package io.faro.worker.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.auth.PlacementGrants;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.HandlerCalls;
import io.faro.common.version.ClusterLevel;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MessageType;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.ReserveSlotsResponse;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.StopWorkerRequest;
import io.faro.proto.StopWorkerResponse;
import io.faro.proto.WorkerEndpointP;
import io.faro.proto.WorkerStateP;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.SealReport;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.status.WorkerStatusSampler;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.IoMode;
import io.faro.worker.testing.TestDisks;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker's RPC handler with authentication on, over a store on a real disk directory: a
 * reservation needs the masters' placement grant (and a replica its replica grant), the app's own
 * registration reserves and commits, an operator stops, anyone reads the status; every refusal is
 * an answer, and nothing is reserved by a refused request.
 */
class ControlHandlerTest {
  private static final String SELF = "worker-7";
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-control"), 2);
  private static final ShuffleKeyP KEY =
      ShuffleKeyP.newBuilder().setAppId("app-control").setShuffleId(2).build();
  private static final String NONCE = "1".repeat(32);
  private static final Identity APP = Identity.app(SHUFFLE.app(), NONCE);
  private static final long TOKEN = 77;

  @TempDir Path root;
  private Secret cluster;
  private Disks disks;
  private PartitionStore store;
  private ScheduledExecutorService memoryThread;
  private ControlHandler handler;
  private CompletableFuture<SealReport> stopped;
  private final ClusterLevel level = new ClusterLevel();

  @BeforeEach
  void open() {
    cluster = Secret.of("0123456789abcdef0123456789abcdef");
    disks = TestDisks.ssds(root, 1);
    store = new PartitionStore(disks, new WriterSettings(4096, 16 * 1024));
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    MemoryBudget budget = new MemoryBudget(1L << 28, 1L << 27, store::flushBuffered, memoryThread);
    stopped = new CompletableFuture<>();
    handler =
        new ControlHandler(
            store,
            new WorkerStatusSampler(budget, List.of(IoMode.BUFFERED)),
            () -> WorkerStateP.SERVING,
            (worker, graceful) -> {
              stopped.complete(new SealReport(0, 0, 0));
              return stopped;
            },
            new AuthSettings(true, Optional.of(cluster), Optional.empty()),
            () -> SELF,
            level);
  }

  @AfterEach
  void close() throws Exception {
    store.close();
    disks.close();
    memoryThread.shutdownNow();
  }

  private static PartitionLocationP location(int partition) {
    return PartitionLocationP.newBuilder()
        .setPartitionId(partition)
        .setEpoch(0)
        .setWorkerId(SELF)
        .setDiskIndex(0)
        .build();
  }

  private ReserveSlotsRequest.Builder reservation(int numPartitions, int... partitions) {
    return ReserveSlotsRequest.newBuilder()
        .setShuffle(KEY)
        .setOwnerToken(TOKEN)
        .setNumPartitions(numPartitions)
        .addAllLocations(IntStream.of(partitions).mapToObj(ControlHandlerTest::location).toList())
        .setPlacementGrant(
            ByteString.copyFrom(PlacementGrants.grant(cluster, SHUFFLE, numPartitions, SELF)));
  }

  @Test
  void onlyWhatTheMastersPlacedHereIsReserved() throws Exception {
    try (HandlerCalls app = new HandlerCalls(APP)) {
      // No grant, a grant for another worker, a grant of another partition count.
      for (ReserveSlotsRequest forged :
          List.of(
              reservation(4, 0, 1).clearPlacementGrant().build(),
              reservation(4, 0, 1)
                  .setPlacementGrant(
                      ByteString.copyFrom(PlacementGrants.grant(cluster, SHUFFLE, 4, "worker-8")))
                  .build(),
              reservation(4, 0, 1).setNumPartitions(5).build())) {
        assertThat(app.send(handler, MessageType.RESERVE_SLOTS_REQUEST, forged, null)).isEmpty();
        ErrorResponse refused = app.error();
        assertThat(refused.getCode()).isEqualTo(ErrorCode.UNAUTHENTICATED.toProto());
        assertThat(refused.getMessage()).contains("was not placed by the masters");
      }
      // A partition beyond the count the masters placed.
      app.send(handler, MessageType.RESERVE_SLOTS_REQUEST, reservation(4, 0, 4).build(), null);
      assertThat(app.error().getMessage()).contains("is not one of the 4 the masters placed");
      // A replica the masters did not place: no replica grant.
      PartitionLocationP withReplica =
          location(1).toBuilder()
              .setReplica(
                  location(1).toBuilder()
                      .setWorkerId("worker-9")
                      .setEndpoint(WorkerEndpointP.newBuilder().setHost("10.0.0.9").setPushPort(9))
                      .build())
              .build();
      app.send(
          handler,
          MessageType.RESERVE_SLOTS_REQUEST,
          reservation(4).addLocations(withReplica).build(),
          null);
      assertThat(app.error().getMessage()).contains("no valid replica grant");
      assertThat(store.heldLocations()).isZero();

      app.send(handler, MessageType.RESERVE_SLOTS_REQUEST, reservation(4, 0, 1, 3).build(), null);
      app.response(ReserveSlotsResponse.class);
      assertThat(store.heldLocations()).isEqualTo(3);
      assertThat(store.appNonce(SHUFFLE)).isEqualTo(NONCE);
      assertThat(store.writer(new PartitionKey(SHUFFLE, 3, 0))).isPresent();
    }
  }

  /**
   * A client of a release before placement grants (protocol 1: its connection states no version)
   * reserves without one only while the masters say the cluster runs at level 1, as during a roll
   * from that release; not before the worker heard the level, and not once it was raised.
   */
  @Test
  void aClientOfProtocolOneReservesWithoutAGrantOnlyAtLevelOne() throws Exception {
    ReserveSlotsRequest ungranted = reservation(4, 0, 1).clearPlacementGrant().build();
    try (HandlerCalls app = new HandlerCalls(APP)) {
      app.send(handler, MessageType.RESERVE_SLOTS_REQUEST, ungranted, null);
      assertThat(app.error().getMessage()).contains("was not placed by the masters");
    }
    level.heard(0); // a master from before feature levels: level 1
    try (HandlerCalls app = new HandlerCalls(APP)) {
      app.send(handler, MessageType.RESERVE_SLOTS_REQUEST, ungranted, null);
      app.response(ReserveSlotsResponse.class);
      assertThat(store.heldLocations()).isEqualTo(2);
      // Still only partitions below the count it states.
      app.send(
          handler,
          MessageType.RESERVE_SLOTS_REQUEST,
          reservation(4, 4).clearPlacementGrant().build(),
          null);
      assertThat(app.error().getMessage()).contains("is not one of the 4");
    }
    level.heard(2);
    try (HandlerCalls app = new HandlerCalls(APP)) {
      app.send(
          handler,
          MessageType.RESERVE_SLOTS_REQUEST,
          reservation(4, 2).clearPlacementGrant().build(),
          null);
      assertThat(app.error().getMessage()).contains("was not placed by the masters");
      assertThat(store.heldLocations()).isEqualTo(2);
    }
  }

  @Test
  void theAppsOwnRegistrationReservesAndCommitsAndNobodyElse() throws Exception {
    try (HandlerCalls app = new HandlerCalls(APP);
        HandlerCalls otherRegistration =
            new HandlerCalls(Identity.app(SHUFFLE.app(), "2".repeat(32)));
        HandlerCalls otherApp = new HandlerCalls(Identity.app(new AppId("app-other"), NONCE));
        HandlerCalls anonymous = new HandlerCalls(Identity.ANONYMOUS)) {
      app.send(handler, MessageType.RESERVE_SLOTS_REQUEST, reservation(2, 0, 1).build(), null);
      app.response(ReserveSlotsResponse.class);

      CommitFilesRequest commit =
          CommitFilesRequest.newBuilder().setShuffle(KEY).setOwnerToken(TOKEN).build();
      for (HandlerCalls stranger : List.of(otherRegistration, otherApp, anonymous)) {
        assertThat(stranger.send(handler, MessageType.COMMIT_FILES_REQUEST, commit, null))
            .isPresent();
        assertThat(
                stranger.send(
                    handler, MessageType.RESERVE_SLOTS_REQUEST, reservation(2, 0).build(), null))
            .isPresent();
      }
      // The owner's token is the commit's too.
      app.send(
          handler,
          MessageType.COMMIT_FILES_REQUEST,
          commit.toBuilder().setOwnerToken(TOKEN + 1).build(),
          null);
      assertThat(app.error().getCode()).isEqualTo(ErrorCode.NOT_OWNER.toProto());

      app.send(handler, MessageType.COMMIT_FILES_REQUEST, commit, null);
      CommitFilesResponse committed = app.response(CommitFilesResponse.class);
      assertThat(committed.getFailedPartitionIdsList()).isEmpty();
    }
  }

  @Test
  void onlyAnOperatorStopsTheWorkerAndAnyoneReadsItsStatus() throws Exception {
    StopWorkerRequest stop = StopWorkerRequest.newBuilder().setWorkerId(SELF).build();
    try (HandlerCalls app = new HandlerCalls(APP);
        HandlerCalls admin = new HandlerCalls(Identity.ADMIN);
        HandlerCalls anonymous = new HandlerCalls(Identity.ANONYMOUS)) {
      assertThat(app.send(handler, MessageType.STOP_WORKER_REQUEST, stop, null)).isPresent();
      assertThat(stopped).isNotDone();
      assertThat(handler.openToAnyone()).containsExactly(MessageType.WORKER_STATUS_REQUEST);
      anonymous.send(
          handler,
          MessageType.WORKER_STATUS_REQUEST,
          WorkerStatusRequest.getDefaultInstance(),
          null);
      WorkerStatusResponse status = anonymous.response(WorkerStatusResponse.class);
      assertThat(status.getDiskTiersList()).containsExactly("ssd");

      assertThat(admin.send(handler, MessageType.STOP_WORKER_REQUEST, stop, null)).isEmpty();
      admin.response(StopWorkerResponse.class);
      assertThat(stopped).isDone();
    }
  }
}
