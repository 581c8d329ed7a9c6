package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.json.Json;
import io.faro.common.master.MasterClient;
import io.faro.common.network.ClientPool;
import io.faro.common.network.FreePorts;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.network.RemoteException;
import io.faro.common.testing.Eventually;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.DiskStatusP;
import io.faro.proto.EmptyResponse;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.SetWorkerAdmissionRequest;
import io.faro.proto.TransferLeaderRequest;
import io.faro.proto.WorkerAdmissionP;
import io.faro.proto.WorkerHeartbeatResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three masters in one JVM run the same code as one: followers point at the leader, a new leader
 * keeps the state, every master reports its own view, leadership moves on request, and a follower
 * that missed purged log entries (down, or its storage wiped) catches up from a snapshot installed
 * by the leader.
 */
class ThreeMasterTest {
  /** Small, so that a few hundred entries make several snapshots and purge the log behind them. */
  private static final String SNAPSHOT_EVERY = "20";

  @TempDir Path dir;
  private final int[] rpcPorts = new int[3];
  private final int[] raftPorts = new int[3];
  private final List<String> peers = new ArrayList<>();
  private final List<HostPort> endpoints = new ArrayList<>();
  private final MasterServer[] masters = new MasterServer[3];
  private ClientPool pool;
  private MasterClient client;

  @BeforeEach
  void startGroup() throws IOException {
    int[] ports = FreePorts.loopback(6);
    for (int i = 0; i < 3; i++) {
      rpcPorts[i] = ports[i];
      raftPorts[i] = ports[3 + i];
      peers.add("m" + (i + 1) + "@127.0.0.1:" + raftPorts[i] + "/" + rpcPorts[i]);
      endpoints.add(new HostPort("127.0.0.1", rpcPorts[i]));
    }
    pool = new ClientPool("test-client", NetworkSettings.from(FaroConf.empty()));
    client = new MasterClient(pool, endpoints, Duration.ofSeconds(30));
    CompletableFuture.allOf(
            Stream.of(0, 1, 2)
                .map(i -> CompletableFuture.runAsync(() -> start(i)))
                .toArray(CompletableFuture[]::new))
        .join();
    Eventually.await("a leader", Duration.ofSeconds(20), () -> leaderIndex() >= 0);
  }

  @AfterEach
  void stopGroup() {
    for (MasterServer m : masters) {
      if (m != null) {
        m.close();
      }
    }
    pool.close();
  }

  @Test
  void followersRedirectToTheLeaderAndANewLeaderKeepsTheState() {
    MasterServer leader = masters[leaderIndex()];
    MasterServer follower = masters[(leaderIndex() + 1) % 3];

    RemoteException redirect =
        (RemoteException)
            Futures.unwrap(
                pool.call(
                        new HostPort("127.0.0.1", follower.rpcPort()),
                        Requests.registerApp("app-1"),
                        EmptyResponse.class)
                    .handle((ok, e) -> e)
                    .join());
    assertThat(redirect.code()).isEqualTo(ErrorCode.NOT_LEADER);
    assertThat(redirect.leaderHint()).isEqualTo("127.0.0.1:" + leader.rpcPort());

    client.callBlocking(Requests.registerWorker("w1", 1), RegisterWorkerResponse.class);
    client.callBlocking(Requests.registerApp("app-1"), EmptyResponse.class);

    leader.close();
    Eventually.await(
        "a new leader",
        Duration.ofSeconds(20),
        () -> Stream.of(masters).anyMatch(m -> m != leader && m.isLeader()));
    ClusterStatusResponse status =
        client.callBlocking(ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
    assertThat(status.getLeaderId()).isNotEqualTo(leader.masterId());
    assertThat(status.getAppsList()).containsExactly("app-1");
    assertThat(status.getWorkersList())
        .singleElement()
        .satisfies(w -> assertThat(w.getWorkerId()).isEqualTo("w1"));
  }

  @Test
  void everyMasterReportsItsOwnViewAndLeadershipMovesOnRequest() {
    client.callBlocking(Requests.registerApp("app-1"), EmptyResponse.class);
    int leader = leaderIndex();
    Eventually.await(
        "every master applied the app",
        Duration.ofSeconds(10),
        () -> Stream.of(0, 1, 2).allMatch(i -> status(i).getApps() == 1));
    for (int i = 0; i < 3; i++) {
      MasterStatusResponse s = status(i);
      assertThat(s.getMasterId()).isEqualTo("m" + (i + 1));
      assertThat(s.getRole()).isEqualTo(i == leader ? "leader" : "follower");
      assertThat(s.getLeaderReady()).isEqualTo(i == leader);
      assertThat(s.getLeaderId()).isEqualTo("m" + (leader + 1));
      assertThat(s.getTerm()).isEqualTo(status(leader).getTerm());
      assertThat(s.getPid()).isEqualTo(ProcessHandle.current().pid());
      assertThat(s.getPeersList()).containsExactlyElementsOf(peers);
      assertThat(s.getRpcEndpoint()).isEqualTo("127.0.0.1:" + rpcPorts[i]);
      // The HTTP status page tells the same.
      String page = httpGet(masters[i].httpPort(), "/status");
      assertThat(Json.string(page, "id")).isEqualTo("m" + (i + 1));
      assertThat(Json.string(page, "role")).isEqualTo(s.getRole());
      assertThat(Json.number(page, "term")).isEqualTo(s.getTerm());
      assertThat(Json.number(page, "pid")).isEqualTo(s.getPid());
      assertThat(httpGet(masters[i].httpPort(), "/"))
          .contains("Faro master m" + (i + 1))
          .contains("role");
      // And so do its metrics.
      String metrics = httpGet(masters[i].httpPort(), "/metrics");
      assertThat(metric(metrics, "faro_master_raft_role{role=\"" + s.getRole() + "\"}"))
          .isEqualTo(1);
      assertThat(metric(metrics, "faro_master_raft_role{role=\"candidate\"}")).isZero();
      assertThat(metric(metrics, "faro_master_raft_term")).isEqualTo(s.getTerm());
      assertThat(metric(metrics, "faro_master_raft_leader_changes_total")).isGreaterThan(0);
    }

    int target = (leader + 1) % 3;
    long termBefore = status(leader).getTerm();
    // Sent to a follower, the transfer is redirected to the leader by the client.
    client.callBlocking(
        TransferLeaderRequest.newBuilder().setTo("m" + (target + 1)).build(), EmptyResponse.class);

    Eventually.await(
        "m" + (target + 1) + " leads", Duration.ofSeconds(10), () -> masters[target].isLeader());
    assertThat(status(target).getTerm()).isGreaterThan(termBefore);
    client.callBlocking(Requests.registerApp("app-2"), EmptyResponse.class);
    assertThat(masters[target].stateView().apps()).hasSize(2);
    String targetMetrics = httpGet(masters[target].httpPort(), "/metrics");
    assertThat(metric(targetMetrics, "faro_master_raft_role{role=\"leader\"}")).isEqualTo(1);
    assertThat(metric(targetMetrics, "faro_master_raft_leader_changes_total"))
        .isGreaterThanOrEqualTo(2);
    assertThat(metric(targetMetrics, "faro_master_apps")).isEqualTo(2);
    assertThat(
            metric(targetMetrics, "faro_master_requests_total{port=\"rpc\",type=\"register_app\"}"))
        .isGreaterThanOrEqualTo(1);
    assertThat(
            metric(
                httpGet(masters[leader].httpPort(), "/metrics"),
                "faro_master_raft_role{role=\"follower\"}"))
        .isEqualTo(1);
    RemoteException unknown =
        (RemoteException)
            Futures.unwrap(
                pool.call(
                        endpoints.get(target),
                        TransferLeaderRequest.newBuilder().setTo("m9").build(),
                        EmptyResponse.class)
                    .handle((ok, e) -> e)
                    .join());
    assertThat(unknown.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(unknown.getMessage()).contains("m9");
  }

  @Test
  void aMillionPartitionsAreAllocatedWithoutTheLeaderSteppingDown() {
    registerTwoWorkersAndAnApp();
    int leader = leaderIndex();
    long term = status(leader).getTerm();

    RequestSlotsResponse slots =
        client.callBlocking(
            Requests.requestSlots(Requests.shuffle("app-1", 0), 1_000_000),
            RequestSlotsResponse.class);

    assertThat(slots.getLocationsCount()).isEqualTo(1_000_000);
    long applied = status(leader).getAppliedIndex();
    Eventually.await(
        "every master applied the allocation",
        Duration.ofSeconds(10),
        () -> Stream.of(0, 1, 2).allMatch(i -> status(i).getAppliedIndex() >= applied));
    for (MasterServer m : masters) {
      assertThat(m.stateView().shuffles().values())
          .singleElement()
          .satisfies(s -> assertThat(s.totalSlots()).isEqualTo(1_000_000));
    }
    assertThat(leaderIndex()).isEqualTo(leader);
    assertThat(status(leader).getTerm()).isEqualTo(term);
  }

  @Test
  void aNewLeaderPlacesOnTheDiskLoadsItHeardAsAFollower() {
    registerTwoWorkersAndAnApp();
    Eventually.await(
        "every master knows both workers",
        Duration.ofSeconds(10),
        () -> Stream.of(0, 1, 2).allMatch(i -> status(i).getAliveWorkers() == 2));
    // Workers heartbeat every master: w1's only disk is broken, w2's healthy.
    for (var answer :
        client.callEach(
            Requests.heartbeat("w1", 0, DiskStatusP.BROKEN), WorkerHeartbeatResponse.class)) {
      answer.join();
    }
    for (var answer :
        client.callEach(
            Requests.heartbeat("w2", 0, DiskStatusP.HEALTHY), WorkerHeartbeatResponse.class)) {
      assertThat(answer.join().getRegisterAgain()).isFalse();
    }

    closeTheLeaderAndAwaitANewOne();

    // No heartbeat reached the new leader since it was elected: it places on what it heard.
    RequestSlotsResponse slots =
        client.callBlocking(
            Requests.requestSlots(Requests.shuffle("app-1", 0), 8), RequestSlotsResponse.class);
    assertThat(slots.getLocationsList())
        .hasSize(8)
        .allSatisfy(l -> assertThat(l.getWorkerId()).isEqualTo("w2"));
  }

  @Test
  void anExcludedWorkerGetsNoSlotsFromANewLeaderEither() {
    registerTwoWorkersAndAnApp();
    client.callBlocking(
        SetWorkerAdmissionRequest.newBuilder()
            .setWorkerId("w1")
            .setAdmission(WorkerAdmissionP.ADMISSION_EXCLUDED)
            .setReason("suspect NIC")
            .build(),
        EmptyResponse.class);

    closeTheLeaderAndAwaitANewOne();

    RequestSlotsResponse slots =
        client.callBlocking(
            Requests.requestSlots(Requests.shuffle("app-1", 0), 8), RequestSlotsResponse.class);
    assertThat(slots.getLocationsList())
        .hasSize(8)
        .allSatisfy(l -> assertThat(l.getWorkerId()).isEqualTo("w2"));
    ClusterStatusResponse status =
        client.callBlocking(ClusterStatusRequest.getDefaultInstance(), ClusterStatusResponse.class);
    assertThat(status.getWorkersList())
        .filteredOn(w -> w.getWorkerId().equals("w1"))
        .singleElement()
        .satisfies(
            w -> {
              assertThat(w.getAdmission()).isEqualTo(WorkerAdmissionP.ADMISSION_EXCLUDED);
              assertThat(w.getAdmissionReason()).isEqualTo("suspect NIC");
            });

    client.callBlocking(
        SetWorkerAdmissionRequest.newBuilder()
            .setWorkerId("w1")
            .setAdmission(WorkerAdmissionP.ADMISSION_ACTIVE)
            .build(),
        EmptyResponse.class);
    RequestSlotsResponse again =
        client.callBlocking(
            Requests.requestSlots(Requests.shuffle("app-1", 1), 8), RequestSlotsResponse.class);
    assertThat(again.getLocationsList()).extracting(l -> l.getWorkerId()).contains("w1", "w2");
  }

  @Test
  void admissionRulesRefuseNewAppsOnANewLeaderTooAndNeverARegisteredOne() {
    client.callBlocking(
        Requests.registerApp("running-guest", "guest", "adhoc"), EmptyResponse.class);
    io.faro.proto.AdmissionRulesResponse set =
        client.callBlocking(
            io.faro.proto.SetAdmissionRulesRequest.newBuilder()
                .setRules("deny user=guest\nadmit name=nightly-* percent=50\ndeny name=nightly-*\n")
                .setReason("rollout")
                .build(),
            io.faro.proto.AdmissionRulesResponse.class);
    assertThat(set.getSource()).isEqualTo("admin: rollout");

    closeTheLeaderAndAwaitANewOne();

    assertThat(
            client.callBlocking(
                io.faro.proto.AdmissionRulesRequest.getDefaultInstance(),
                io.faro.proto.AdmissionRulesResponse.class))
        .isEqualTo(set);
    Throwable refused =
        catchThrowable(
            () ->
                client.callBlocking(
                    Requests.registerApp("app-guest", "guest", "adhoc"), EmptyResponse.class));
    assertThat(refused)
        .isInstanceOf(FaroException.class)
        .hasMessageContaining("admission rule 1 'deny user=guest' (admin: rollout) refuses it")
        .hasMessageContaining("user guest");
    assertThat(((FaroException) refused).code()).isEqualTo(ErrorCode.ADMISSION_REFUSED);
    // Registered before the rules: its heartbeat and a repeated registration still go through.
    client.callBlocking(Requests.appHeartbeat("running-guest"), EmptyResponse.class);
    client.callBlocking(
        Requests.registerApp("running-guest", "guest", "adhoc"), EmptyResponse.class);
    // Half of the nightly names, the same half every time.
    int admitted = 0;
    for (int i = 0; i < 40; i++) {
      String name = "nightly-" + i;
      boolean expected = io.faro.common.admission.AdmissionRule.bucket(name) < 50;
      Throwable answer =
          catchThrowable(
              () ->
                  client.callBlocking(
                      Requests.registerApp("app-" + name, "ann", name), EmptyResponse.class));
      assertThat(answer == null).as(name).isEqualTo(expected);
      admitted += expected ? 1 : 0;
    }
    assertThat(admitted).isBetween(10, 30);
  }

  @Test
  void aFollowerThatMissedPurgedEntriesCatchesUpFromASnapshot() throws IOException {
    registerApps("before-", 5);
    int down = (leaderIndex() + 1) % 3;
    Eventually.await(
        "the follower applied the first apps",
        Duration.ofSeconds(10),
        () -> status(down).getApps(),
        apps -> apps == 5);
    long missedFrom = status(down).getAppliedIndex();
    masters[down].close();

    registerApps("while-down-", 500);

    MasterStatusResponse leader = status(leaderIndex());
    assertThat(leader.getSnapshotIndex()).as("the leader took snapshots").isPositive();
    assertThat(leader.getLogStartIndex())
        .as("and purged the log behind them")
        .isGreaterThan(missedFrom + 1);

    start(down);
    awaitSameState(down);
    assertThat(status(down).getSnapshotIndex()).as("installed from the leader").isPositive();
    assertThat(masters[down].stateView().apps()).hasSize(505);
  }

  @Test
  void aMasterWhoseStorageWasWipedRejoinsAsANewFollower() throws IOException {
    registerApps("before-", 60);
    int wiped = (leaderIndex() + 2) % 3;
    masters[wiped].close();
    deleteRecursively(dir.resolve("m" + (wiped + 1)));
    registerApps("after-", 60);

    start(wiped);
    awaitSameState(wiped);
    assertThat(masters[wiped].stateView().apps()).hasSize(120);
    assertThat(status(wiped).getRole()).isEqualTo("follower");
  }

  private void registerTwoWorkersAndAnApp() {
    client.callBlocking(Requests.registerWorker("w1", 1), RegisterWorkerResponse.class);
    client.callBlocking(Requests.registerWorker("w2", 1), RegisterWorkerResponse.class);
    client.callBlocking(Requests.registerApp("app-1"), EmptyResponse.class);
  }

  private void closeTheLeaderAndAwaitANewOne() {
    MasterServer old = masters[leaderIndex()];
    old.close();
    Eventually.await(
        "a new leader",
        Duration.ofSeconds(20),
        () -> Stream.of(masters).anyMatch(m -> m != old && m.isLeader()));
  }

  private void registerApps(String prefix, int count) {
    for (int i = 0; i < count; i++) {
      client.callBlocking(Requests.registerApp(prefix + i), EmptyResponse.class);
    }
  }

  /** Waits until master {@code i} applied what the leader applied, then compares their state. */
  private void awaitSameState(int i) {
    Eventually.await(
        "m" + (i + 1) + " caught up with the leader",
        Duration.ofSeconds(30),
        () -> {
          int leader = leaderIndex();
          return leader >= 0
              && leader != i
              && status(i).getAppliedIndex() >= status(leader).getAppliedIndex();
        });
    assertThat(masters[i].stateView()).isEqualTo(masters[leaderIndex()].stateView());
  }

  private void start(int i) {
    FaroConf conf =
        MasterFixture.conf(dir.resolve("m" + (i + 1)))
            .with(MasterServerOptions.ID, "m" + (i + 1))
            .with(MasterServerOptions.PORT, Integer.toString(rpcPorts[i]))
            .with(MasterServerOptions.RAFT_PEERS, String.join(",", peers))
            .with(MasterServerOptions.RAFT_PORT, Integer.toString(raftPorts[i]))
            .with(MasterServerOptions.SNAPSHOT_THRESHOLD, SNAPSHOT_EVERY)
            .with(MasterServerOptions.RAFT_LOG_SEGMENT_SIZE, "16k");
    MasterServer master = new MasterServer(conf);
    masters[i] = master;
    master.start();
  }

  /** The value of the series {@code series} (name and labels as the text format writes them). */
  private static double metric(String text, String series) {
    return text.lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no series " + series + " in\n" + text));
  }

  private static String httpGet(int port, String path) {
    try {
      HttpResponse<String> response =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                      .timeout(Duration.ofSeconds(10))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      return response.body();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private int leaderIndex() {
    for (int i = 0; i < 3; i++) {
      try {
        if (masters[i] != null && masters[i].isLeader()) {
          return i;
        }
      } catch (IllegalStateException stopped) {
        // Closed: not the leader.
      }
    }
    return -1;
  }

  private MasterStatusResponse status(int i) {
    return Futures.await(
        pool.call(
            endpoints.get(i), MasterStatusRequest.getDefaultInstance(), MasterStatusResponse.class),
        Duration.ofSeconds(10),
        "status of m" + (i + 1));
  }

  private static void deleteRecursively(Path root) throws IOException {
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
