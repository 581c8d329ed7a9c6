package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.faro.client.ClientSettings;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.driver.LifecycleManager;
import io.faro.client.fetch.ReducerFileGroups;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.json.Json;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkOptions;
import io.faro.common.network.NetworkSettings;
import io.faro.proto.CommitFilesRequest;
import io.faro.proto.GetReducerFileGroupsRequest;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterAppResponse;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.ReserveSlotsRequest;
import io.faro.proto.RoleP;
import io.faro.proto.ShuffleKeyP;
import io.faro.proto.StopWorkerRequest;
import io.faro.proto.StopWorkerResponse;
import io.faro.proto.UnregisterShuffleRequest;
import io.faro.proto.WorkerEndpointP;
import io.faro.proto.WorkerStatusRequest;
import io.faro.proto.WorkerStatusResponse;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A local cluster of real processes with faro.auth.enabled: its workers register and heartbeat with
 * the cluster secret, an application gets its own secret when it registers and its shuffle runs
 * through the cluster (replicated worker to worker), while another application, or a process
 * without the right secret, cannot push into, read, commit or unregister that shuffle, call its
 * driver, take its app id, register as a worker, forge a replica's push or stop a worker; an
 * operator's state change needs the admin secret. Refusals name what was missing.
 */
class ClusterAuthTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private record Admin(int exitCode, String out, String err) {}

  private static Admin admin(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = FaroCli.run(new PrintWriter(out), new PrintWriter(err), args);
    return new Admin(code, out.toString(), err.toString());
  }

  private static Admin excludeWorker(String workerId, String endpoints, Path conf) {
    return admin(
        "admin",
        "exclude-worker",
        "--id",
        workerId,
        "--reason",
        "test",
        "--endpoints",
        endpoints,
        "--conf",
        conf.toString());
  }

  private static Path conf(Path file, Map<String, String> values) throws Exception {
    StringBuilder text = new StringBuilder();
    values.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
    return Files.writeString(file, text);
  }

  private static void assertRefused(
      ClientPool pool, HostPort where, com.google.protobuf.Message request, String reason) {
    assertThatThrownBy(
            () ->
                Futures.await(
                    pool.send(where, request, null, WAIT)
                        .thenApply(
                            frame -> {
                              frame.release();
                              return frame;
                            }),
                    WAIT,
                    request.getClass().getSimpleName()))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        .hasMessageContaining(reason);
  }

  /** Pushing to, reading, committing and unregistering the shuffle {@code key} are all refused. */
  private static void assertShuffleRefused(
      ClientPool pool,
      ShuffleKeyP key,
      String reason,
      HostPort push,
      HostPort fetch,
      HostPort rpc,
      HostPort master) {
    assertRefused(pool, push, PushRequest.newBuilder().setShuffle(key).build(), reason);
    assertRefused(pool, fetch, OpenStreamRequest.newBuilder().setShuffle(key).build(), reason);
    assertRefused(pool, rpc, CommitFilesRequest.newBuilder().setShuffle(key).build(), reason);
    assertRefused(
        pool, master, UnregisterShuffleRequest.newBuilder().setShuffle(key).build(), reason);
  }

  @Test
  void onlyHoldersOfTheSecretsActAsMembersOrOperators(@TempDir Path dir) throws Exception {
    Path clusterSecret = dir.resolve("cluster.secret");
    Path adminSecret = dir.resolve("admin.secret");
    Secret cluster = Secret.writeNew(clusterSecret);
    Secret.writeNew(adminSecret);
    Path members =
        conf(
            dir.resolve("members.conf"),
            Map.of(
                "faro.auth.enabled", "true",
                "faro.auth.cluster.secret.file", clusterSecret.toString(),
                "faro.auth.admin.secret.file", adminSecret.toString()));
    Path operator =
        conf(
            dir.resolve("operator.conf"),
            Map.of(
                "faro.auth.enabled",
                "true",
                "faro.auth.admin.secret.file",
                adminSecret.toString()));
    Path stranger = conf(dir.resolve("stranger.conf"), Map.of("faro.auth.enabled", "true"));

    TextShuffle text = new TextShuffle(2, 4, 1_000);
    try (LocalCluster local =
        LocalCluster.start(
            dir.resolve("cluster"), LocalCluster.Options.workers(2).withConf(members))) {
      String endpoints = local.masterEndpoint();
      HostPort master = HostPort.parse(endpoints.split(",")[0]);
      String clusterJson =
          Files.readString(dir.resolve("cluster").resolve(LocalCluster.CLUSTER_FILE));
      String workerId = Json.strings(clusterJson, "workerId").get(0);
      String workerPorts = local.member("worker-0").ports();
      HostPort rpc = new HostPort("127.0.0.1", (int) Json.number(workerPorts, "rpcPort"));
      HostPort push = new HostPort("127.0.0.1", (int) Json.number(workerPorts, "pushPort"));
      HostPort fetch = new HostPort("127.0.0.1", (int) Json.number(workerPorts, "fetchPort"));

      // The worker registered with the cluster secret; anyone may read the status.
      Admin workers =
          admin("admin", "workers", "--endpoints", endpoints, "--conf", stranger.toString());
      assertThat(workers.exitCode()).as(workers.err()).isZero();
      assertThat(workers.out()).contains(workerId);

      // An application learns at registration that the cluster authenticates it: its shuffle is
      // pushed, replicated (worker to worker, with the cluster secret), committed and read back.
      ClientSettings settings =
          ClientSettings.from(
              FaroConf.of(
                  Map.of(
                      "faro.master.endpoints", endpoints,
                      "faro.client.lifecycle.host", "127.0.0.1",
                      "faro.client.push.replicate.enabled", "true")));
      try (ClientPool pool = new ClientPool("test", settings.network());
          LifecycleManager lifecycle =
              new LifecycleManager(new AppId("auth-app"), settings, pool, "127.0.0.1");
          ClientPool otherPool = new ClientPool("other", settings.network());
          LifecycleManager other =
              new LifecycleManager(new AppId("other-app"), settings, otherPool, "127.0.0.1")) {
        assertThat(lifecycle.clusterAuthenticates()).isTrue();
        assertThat(pool.credentials().identity().wire()).startsWith("app:auth-app:");
        ShuffleClient client = new ShuffleClient(pool, settings);
        EngineShuffleId shuffle = new EngineShuffleId(lifecycle.app(), 0);
        for (int m = 0; m < 2; m++) {
          int[] counts = text.push(client, lifecycle.endpoint(), shuffle, m);
          client.mapperEnd(lifecycle.endpoint(), shuffle, m, 0, 2, counts);
        }
        ReducerFileGroups groups = client.fileGroups(lifecycle.endpoint(), shuffle, 2, 0);
        assertThat(groups.lost(0)).isFalse();
        Map<String, Integer> seen = text.readAll(client, lifecycle.endpoint(), shuffle);
        assertThat(seen).hasSize(text.total());
        assertThat(seen.values()).allMatch(n -> n == 1);
        long replicated = 0;
        for (String name : new String[] {"worker-0", "worker-1"}) {
          int port = (int) Json.number(local.member(name).ports(), "rpcPort");
          replicated +=
              Futures.await(
                      pool.call(
                          new HostPort("127.0.0.1", port),
                          WorkerStatusRequest.getDefaultInstance(),
                          WorkerStatusResponse.class),
                      WAIT,
                      "status")
                  .getReplicatedBytes();
        }
        assertThat(replicated).as("bytes forwarded to replicas").isPositive();

        // Another application knows every id of this shuffle and still touches nothing of it.
        ShuffleKeyP key = ShuffleKeyP.newBuilder().setAppId("auth-app").setShuffleId(0).build();
        String refusedHere =
            "acts on app auth-app: it needs a connection authenticated as that app";
        assertShuffleRefused(otherPool, key, refusedHere, push, fetch, rpc, master);
        assertRefused(
            otherPool,
            lifecycle.endpoint(),
            GetReducerFileGroupsRequest.newBuilder().setShuffleId(0).setNumMaps(2).build(),
            "faro-lifecycle holds no app:other-app:");
        try (ClientPool anonymous = new ClientPool("anonymous", settings.network())) {
          assertRefused(
              anonymous,
              lifecycle.endpoint(),
              GetReducerFileGroupsRequest.newBuilder().setShuffleId(0).setNumMaps(2).build(),
              "faro-lifecycle takes GET_REDUCER_FILE_GROUPS_REQUEST only from a connection that "
                  + "proved who it is");
          // Refused on its frame's header, before it is parsed.
          assertRefused(
              anonymous,
              push,
              PushRequest.newBuilder().setShuffle(key).build(),
              "faro-worker-push takes PUSH_REQUEST only from a connection that proved who it is");
        }
        // Nor can it take the app's id by registering it again.
        assertRefused(
            otherPool,
            master,
            RegisterAppRequest.newBuilder()
                .setAppId("auth-app")
                .setRegistrationToken(ByteString.copyFrom(new byte[32]))
                .build(),
            "app auth-app is registered already by another driver");
        // A process that claims the app's identity with a guessed secret finds the server out.
        try (ClientPool guess =
            new ClientPool(
                "guess",
                settings.network(),
                AuthOptions.Credentials.app(
                    pool.credentials().identity(), Secret.of("a-guess-at-the-app-secret")))) {
          assertRefused(
              guess,
              fetch,
              OpenStreamRequest.newBuilder().setShuffle(key).build(),
              "the server's proof is wrong");
        }
        // Another registration of the same app id (as after the masters forgot the app, before
        // the workers deleted its files), even holding that registration's real secret, is not
        // the one that reserved the shuffle.
        Identity second = Identity.app(new AppId("auth-app"), AppSecrets.nonce(AppSecrets.token()));
        try (ClientPool secondPool =
            new ClientPool(
                "second-registration",
                settings.network(),
                AuthOptions.Credentials.app(
                    second, AppSecrets.derive(cluster, new AppId("auth-app"), second.nonce())))) {
          String another = "of another registration";
          assertShuffleRefused(secondPool, key, another, push, fetch, rpc, master);
          // Nor after the worker restarted: the registration is kept with the commit record.
          local.restart("worker-0");
          assertRefused(
              secondPool, fetch, OpenStreamRequest.newBuilder().setShuffle(key).build(), another);
        }
        // A driver cannot name its own replica: a worker would forward there with the cluster
        // secret. Without the masters' grant, or with a made-up one, the reservation is refused.
        ReserveSlotsRequest.Builder forged =
            ReserveSlotsRequest.newBuilder()
                .setShuffle(ShuffleKeyP.newBuilder().setAppId("auth-app").setShuffleId(7))
                .setOwnerToken(42)
                .addLocations(
                    PartitionLocationP.newBuilder()
                        .setPartitionId(0)
                        .setRole(RoleP.PRIMARY)
                        .setWorkerId(workerId)
                        .setReplica(
                            PartitionLocationP.newBuilder()
                                .setPartitionId(0)
                                .setRole(RoleP.REPLICA)
                                .setWorkerId("elsewhere")
                                .setEndpoint(
                                    WorkerEndpointP.newBuilder()
                                        .setHost("127.0.0.1")
                                        .setRpcPort(1)
                                        .setPushPort(2)
                                        .setFetchPort(3))));
        String notPlaced = "was not placed by the masters (no valid replica grant)";
        assertRefused(pool, rpc, forged.build(), notPlaced);
        assertRefused(
            pool,
            rpc,
            forged.putReplicaGrants("elsewhere", ByteString.copyFrom(new byte[32])).build(),
            notPlaced);
        // Nor reserve what the masters did not place (a shuffle they never saw, skipping their
        // quotas), or a partition beyond the count they placed, even with a real grant.
        ReserveSlotsRequest.Builder unplaced =
            ReserveSlotsRequest.newBuilder()
                .setShuffle(ShuffleKeyP.newBuilder().setAppId("auth-app").setShuffleId(9))
                .setOwnerToken(43)
                .setNumPartitions(1)
                .addLocations(
                    PartitionLocationP.newBuilder()
                        .setPartitionId(0)
                        .setRole(RoleP.PRIMARY)
                        .setWorkerId(workerId));
        assertRefused(pool, rpc, unplaced.build(), "no valid placement grant");
        assertRefused(
            pool,
            rpc,
            unplaced.setPlacementGrant(ByteString.copyFrom(new byte[32])).build(),
            "no valid placement grant");
        // The shuffle is untouched: read again, whole.
        assertThat(text.readAll(client, lifecycle.endpoint(), shuffle)).isEqualTo(seen);
        assertThat(other.clusterAuthenticates()).isTrue();
      }

      NetworkSettings network =
          NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "1"));
      try (ClientPool anonymous = new ClientPool("stranger", network);
          ClientPool wrongSecret =
              new ClientPool(
                  "impostor",
                  network,
                  new AuthOptions.Credentials(
                      Identity.CLUSTER, Optional.of(Secret.of("a-guess-at-the-cluster-secret"))),
                  address -> Handshake.MASTER)) {
        // A driver's registration retried with its token gets the same nonce and secret again;
        // another token cannot take the app id.
        byte[] token = AppSecrets.token();
        RegisterAppRequest registration =
            RegisterAppRequest.newBuilder()
                .setAppId("retried-app")
                .setRegistrationToken(ByteString.copyFrom(token))
                .build();
        RegisterAppResponse first =
            Futures.await(
                anonymous.call(master, registration, RegisterAppResponse.class), WAIT, "register");
        RegisterAppResponse again =
            Futures.await(
                anonymous.call(master, registration, RegisterAppResponse.class), WAIT, "register");
        assertThat(first.getAppNonce()).isEqualTo(AppSecrets.nonce(token));
        assertThat(again).isEqualTo(first);
        assertThat(first.getAppSecret().toByteArray())
            .hasSize(32)
            .isEqualTo(
                AppSecrets.derive(cluster, new AppId("retried-app"), first.getAppNonce())
                    .toBytes());
        assertRefused(
            anonymous,
            master,
            registration.toBuilder()
                .setRegistrationToken(ByteString.copyFrom(AppSecrets.token()))
                .build(),
            "app retried-app is registered already by another driver");
        // An old client, which sends no token, is told why it cannot register.
        assertRefused(
            anonymous,
            master,
            RegisterAppRequest.newBuilder().setAppId("old-client-app").build(),
            "sent no registration token: its Faro client is older than the cluster's");

        // No fake worker: neither without a secret nor with a guessed one.
        assertThatThrownBy(
                () ->
                    Futures.await(
                        anonymous.call(
                            master,
                            RegisterWorkerRequest.getDefaultInstance(),
                            RegisterWorkerResponse.class),
                        WAIT,
                        "registration"))
            .hasMessageContaining(
                "takes REGISTER_WORKER_REQUEST only from a connection that proved who it is");
        assertThatThrownBy(
                () ->
                    Futures.await(
                        wrongSecret.call(
                            master,
                            RegisterWorkerRequest.getDefaultInstance(),
                            RegisterWorkerResponse.class),
                        WAIT,
                        "registration"))
            .hasMessageContaining("the server's proof is wrong");
        // No forged replica push, no stopping the worker.
        assertThatThrownBy(
                () ->
                    Futures.await(
                        anonymous.call(
                            push,
                            PushRequest.newBuilder().setReplica(true).build(),
                            PushResponse.class),
                        WAIT,
                        "push"))
            .hasMessageContaining(
                "takes PUSH_REQUEST only from a connection that proved who it is");
        assertThatThrownBy(
                () ->
                    Futures.await(
                        anonymous.call(
                            rpc, StopWorkerRequest.getDefaultInstance(), StopWorkerResponse.class),
                        WAIT,
                        "stop"))
            .hasMessageContaining(
                "takes STOP_WORKER_REQUEST only from a connection that proved who it is");
        assertThat(local.member("worker-0").process().isAlive()).isTrue();
      }

      // An operator's change needs the admin secret.
      Admin refused = excludeWorker(workerId, endpoints, stranger);
      Admin excluded = excludeWorker(workerId, endpoints, operator);
      assertThat(excluded.exitCode()).as(excluded.err()).isZero();
      Admin included =
          admin(
              "admin",
              "include-worker",
              "--id",
              workerId,
              "--endpoints",
              endpoints,
              "--conf",
              operator.toString());
      assertThat(included.exitCode()).as(included.err()).isZero();

      Admin after = admin("admin", "workers", "--endpoints", endpoints, "--json");
      assertThat(after.exitCode()).as(after.err()).isZero();
      assertThat(after.out()).contains(workerId).doesNotContain("excluded");
    }
  }
}
