package io.faro.master.service;

import static io.faro.master.testing.Requests.heartbeat;
import static io.faro.master.testing.Requests.registerWorker;
import static io.faro.master.testing.Requests.requestSlots;
import static io.faro.master.testing.Requests.shuffle;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.auth.PlacementGrants;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.Futures;
import io.faro.master.MasterServerSettings;
import io.faro.master.placement.PlacementPolicy;
import io.faro.master.placement.RoundRobinPlacement;
import io.faro.master.raft.RaftNode;
import io.faro.master.testing.MasterFixture;
import io.faro.metrics.FaroMetrics;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.DiskStatusP;
import io.faro.proto.MessageType;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterAppResponse;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.UnregisterAppRequest;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerHeartbeatResponse;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's RPC groups, each called as the dispatch table calls it, over a real single-node Raft
 * group (Ratis, on loopback) with authentication on: what each answers, and what it refuses before
 * anything is submitted to Raft.
 */
class MasterRpcsTest {
  private static final long WAIT_SECONDS = 20;

  @TempDir Path dir;
  private RaftNode raft;
  private Secret cluster;
  private LoadView loads;
  private AppRpcs apps;
  private WorkerRpcs workers;
  private SlotRpcs slots;

  @BeforeEach
  void start() throws Exception {
    Path clusterFile = dir.resolve("cluster.secret");
    cluster = Secret.writeNew(clusterFile);
    Secret.writeNew(dir.resolve("admin.secret"));
    MasterServerSettings config =
        MasterServerSettings.from(
                MasterFixture.conf(dir.resolve("ratis"))
                    .with(AuthOptions.ENABLED, "true")
                    .with(AuthOptions.CLUSTER_SECRET_FILE, clusterFile.toString())
                    .with(AuthOptions.ADMIN_SECRET_FILE, dir.resolve("admin.secret").toString()))
            .withRaftPort(freePort());
    raft = new RaftNode(config);
    raft.start(1);
    assertThat(raft.awaitLeader(Duration.ofSeconds(WAIT_SECONDS))).isTrue();
    loads = new LoadView();
    Clock clock = Clock.systemUTC();
    RaftCalls calls = new RaftCalls(raft, clock);
    FaroMetrics metrics = FaroMetrics.standalone();
    AdmissionService admission = new AdmissionService(raft, loads, clock, "", metrics);
    MasterRequestHandler.Limits limits = new MasterRequestHandler.Limits(1000, 100, 2, 100);
    AuthSettings auth = config.network().auth();
    apps = new AppRpcs(calls, loads, limits, auth, admission);
    workers = new WorkerRpcs(calls, loads);
    PlacementPolicy placement =
        new PlacementPolicy(
            new RoundRobinPlacement(100),
            loads::diskLoads,
            w -> loads.reported(w).state(),
            loads::placed);
    slots =
        new SlotRpcs(
            calls,
            loads,
            placement,
            limits,
            auth,
            admission,
            metrics.counter("faro_master_slots_placed", "Partition locations placed."));
  }

  @AfterEach
  void stop() throws Exception {
    if (raft != null) {
      raft.close();
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static <T extends Message> T answer(CompletableFuture<? extends Message> future)
      throws Exception {
    @SuppressWarnings("unchecked")
    T answer = (T) future.get(WAIT_SECONDS, TimeUnit.SECONDS);
    return answer;
  }

  /** The FaroException {@code call} fails with, thrown at once or through its future. */
  private static FaroException refusal(CheckedCall call) {
    try {
      call.run().get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (FaroException e) {
      return e;
    } catch (Exception e) {
      if (Futures.unwrap(e) instanceof FaroException f) {
        return f;
      }
      throw new AssertionError("failed otherwise", e);
    }
    throw new AssertionError("answered, not refused");
  }

  @FunctionalInterface
  private interface CheckedCall {
    CompletableFuture<? extends Message> run();
  }

  private static RegisterAppRequest registration(String app, byte[] token) {
    return RegisterAppRequest.newBuilder()
        .setAppId(app)
        .setRegistrationToken(ByteString.copyFrom(token))
        .build();
  }

  private static byte[] token(int seed) {
    byte[] token = new byte[AppSecrets.TOKEN_BYTES];
    java.util.Arrays.fill(token, (byte) seed);
    return token;
  }

  @Test
  void anAppRegistersWithItsTokenOnceAndAnotherDriverOfItsIdIsRefused() throws Exception {
    AppId app = new AppId("app-one");
    RegisterAppResponse first = answer(apps.register(registration("app-one", token(1)), "h1"));
    String nonce = AppSecrets.nonce(token(1));
    assertThat(first.getAppNonce()).isEqualTo(nonce);
    assertThat(first.getAppSecret().toByteArray())
        .isEqualTo(AppSecrets.derive(cluster, app, nonce).toBytes());
    // A retry with the same token (its first answer lost) gets the same answer.
    RegisterAppResponse again = answer(apps.register(registration("app-one", token(1)), "h1"));
    assertThat(again).isEqualTo(first);

    FaroException other = refusal(() -> apps.register(registration("app-one", token(2)), "h2"));
    assertThat(other.code()).isEqualTo(ErrorCode.UNAUTHENTICATED);
    assertThat(other.getMessage()).contains("another driver");

    FaroException noToken =
        refusal(
            () -> apps.register(RegisterAppRequest.newBuilder().setAppId("app-two").build(), "h"));
    assertThat(noToken.code()).isEqualTo(ErrorCode.UNAUTHENTICATED);
    assertThat(noToken.getMessage()).contains("no registration token");

    // Only the registration's own identity may act on the app.
    MessageType type = MessageType.APP_HEARTBEAT_REQUEST;
    assertThat(apps.refusal("app-one", Identity.app(app, nonce), type)).isEmpty();
    assertThat(apps.refusal("app-one", Identity.app(app, AppSecrets.nonce(token(2))), type))
        .isPresent();
    assertThat(apps.refusal("app-one", Identity.ANONYMOUS, type)).isPresent();
    assertThat(apps.refusal("app-one", Identity.CLUSTER, type)).isPresent();
    assertThat(apps.refusal("app-two", Identity.app(app, nonce), type))
        .hasValueSatisfying(reason -> assertThat(reason).contains("authenticated as that app"));
    assertThat(apps.refusal("x".repeat(AppId.MAX_LENGTH + 1), Identity.app(app, nonce), type))
        .hasValueSatisfying(reason -> assertThat(reason).contains("names no valid app"));
  }

  @Test
  void oneHostIsBoundedAndAnotherHostStillRegisters() throws Exception {
    answer(apps.register(registration("app-a", token(3)), "10.0.0.1"));
    answer(apps.register(registration("app-b", token(4)), "10.0.0.1"));
    FaroException third = refusal(() -> apps.register(registration("app-c", token(5)), "10.0.0.1"));
    assertThat(third.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(third.getMessage()).contains("10.0.0.1").contains("faro.master.max.apps.per.host");
    answer(apps.register(registration("app-c", token(5)), "10.0.0.2"));
    assertThat((int) raft.read(state -> state.apps().size())).isEqualTo(3);
  }

  @Test
  void anAppRemovedMeanwhileIsRegisteredAgainByItsHeartbeatWithItsNonce() throws Exception {
    AppId app = new AppId("app-back");
    String nonce = AppSecrets.nonce(token(6));
    answer(apps.register(registration("app-back", token(6)), "h"));
    answer(apps.unregister(UnregisterAppRequest.newBuilder().setAppId("app-back").build()));
    assertThat((boolean) raft.read(state -> state.hasApp(app))).isFalse();

    answer(
        apps.heartbeat(
            AppHeartbeatRequest.newBuilder().setAppId("app-back").build(),
            Identity.app(app, nonce),
            "h"));

    assertThat((String) raft.read(state -> state.apps().get(app).nonce())).isEqualTo(nonce);
  }

  @Test
  void aWorkerIsBoundedInDisksAndTheLeaderTellsItWhichShufflesExpired() throws Exception {
    FaroException tooMany = refusal(() -> workers.register(registerWorker("w1", 1025)));
    assertThat(tooMany.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(tooMany.getMessage()).contains("1025 disks; at most 1024");
    assertThat((int) raft.read(state -> state.workers().size())).isZero();

    answer(workers.register(registerWorker("w1", 1)));
    WorkerHeartbeatResponse answer =
        answer(
            workers.heartbeat(
                WorkerHeartbeatRequest.newBuilder(heartbeat("w1", 0, DiskStatusP.HEALTHY))
                    .addShuffles(shuffle("gone-app", 3))
                    .build()));

    assertThat(answer.getLeader()).isTrue();
    assertThat(answer.getRegisterAgain()).isFalse();
    assertThat(answer.getExpiredShufflesList()).containsExactly(shuffle("gone-app", 3));
    WorkerHeartbeatResponse unknown =
        answer(workers.heartbeat(heartbeat("w9", 0, DiskStatusP.HEALTHY)));
    assertThat(unknown.getRegisterAgain()).isTrue();
  }

  @Test
  void slotsAreBoundedGrantedToTheWorkersPlacedAndOnlyForARegisteredApp() throws Exception {
    FaroException tooLarge =
        refusal(() -> slots.requestSlots(requestSlots(shuffle("app-s", 0), 1001)));
    assertThat(tooLarge.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    assertThat(tooLarge.getMessage()).contains("faro.master.max.partitions.per.shuffle");

    answer(workers.register(registerWorker("w1", 1)));
    answer(workers.register(registerWorker("w2", 1)));
    answer(workers.heartbeat(heartbeat("w1", 0, DiskStatusP.HEALTHY)));
    answer(workers.heartbeat(heartbeat("w2", 0, DiskStatusP.HEALTHY)));

    FaroException unknown = refusal(() -> slots.requestSlots(requestSlots(shuffle("app-s", 0), 8)));
    assertThat(unknown.code()).isEqualTo(ErrorCode.UNKNOWN_APP);

    answer(apps.register(registration("app-s", token(7)), "h"));
    RequestSlotsResponse placed = answer(slots.requestSlots(requestSlots(shuffle("app-s", 0), 8)));

    assertThat(placed.getLocationsCount()).isEqualTo(8);
    assertThat(placed.getPlacementGrantsMap()).containsOnlyKeys("w1", "w2");
    ShuffleId id = new ShuffleId(new AppId("app-s"), 0);
    placed
        .getPlacementGrantsMap()
        .forEach(
            (worker, grant) ->
                assertThat(PlacementGrants.valid(cluster, id, 8, worker, grant.toByteArray()))
                    .as(worker)
                    .isTrue());
    assertThat(
            PlacementGrants.valid(
                cluster, id, 9, "w1", placed.getPlacementGrantsOrThrow("w1").toByteArray()))
        .isFalse();
  }
}
