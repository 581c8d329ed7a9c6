package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.version.Compatibility;
import io.faro.proto.AuthFinishRequest;
import io.faro.proto.AuthFinishResponse;
import io.faro.proto.AuthStartRequest;
import io.faro.proto.AuthStartResponse;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.EmptyResponse;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MessageType;
import io.faro.proto.TransferLeaderRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Connections prove an identity with the handshake before a server lets them send what needs it:
 * real servers and client pools on loopback. Anonymous connections keep what is open; a wrong
 * secret is found out on either side, never sent; a proof from one connection proves nothing on
 * another; a refused request is answered UNAUTHENTICATED and its connection closed.
 */
class TransportAuthTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Secret CLUSTER = Secret.of("cluster-secret-0123456789abcdef");
  private static final Secret ADMIN = Secret.of("admin-secret-0123456789abcdefgh");
  private static final Secret WRONG = Secret.of("not-the-secret-0123456789abcdef");

  private TransportServer server;
  private final java.util.List<ClientPool> pools = new java.util.ArrayList<>();

  private static NetworkSettings network(AuthSettings auth) {
    return NetworkSettings.from(FaroConf.empty().with(NetworkOptions.IO_THREADS, "1"))
        .withAuth(auth);
  }

  private static AuthSettings holding(Secret cluster, Secret admin) {
    return new AuthSettings(true, Optional.ofNullable(cluster), Optional.ofNullable(admin));
  }

  // Master status is answered once this completes (a request held in flight).
  private volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

  /**
   * Cluster status needs the cluster secret, a leader transfer the admin one; master status is open
   * to anyone, and answered when {@link #gate} opens.
   */
  private TransportServer server(AuthSettings auth) {
    return server(auth, Compatibility.OLDEST_PROTOCOL);
  }

  /** As {@link #server(AuthSettings)}, taking wire protocols from {@code oldestProtocol} up. */
  private TransportServer server(AuthSettings auth, int oldestProtocol) {
    return new TransportServer(
        "auth-test",
        "127.0.0.1",
        0,
        "faro.test.port",
        network(auth),
        RequestHandler.requiring(handler(), () -> oldestProtocol),
        null);
  }

  private RequestHandler handler() {
    return new RequestHandler() {
      @Override
      public void handle(Request request, Responder responder) {
        if (request.type() == MessageType.MASTER_STATUS_REQUEST) {
          gate.thenRun(() -> responder.respond(EmptyResponse.getDefaultInstance()));
        } else {
          responder.respond(EmptyResponse.getDefaultInstance());
        }
      }

      @Override
      public java.util.Set<MessageType> openToAnyone() {
        return java.util.Set.of(MessageType.MASTER_STATUS_REQUEST);
      }

      @Override
      public Optional<String> refusal(
          MessageType type, com.google.protobuf.Message meta, Identity who) {
        return switch (type) {
          case CLUSTER_STATUS_REQUEST -> Identity.require(Identity.CLUSTER, who, type);
          case TRANSFER_LEADER_REQUEST -> Identity.require(Identity.ADMIN, who, type);
          default -> Optional.empty();
        };
      }
    };
  }

  private ClientPool pool(AuthOptions.Credentials credentials) {
    ClientPool pool = new ClientPool("auth-test-client", network(AuthSettings.OFF), credentials);
    pools.add(pool);
    return pool;
  }

  private HostPort address() {
    return new HostPort("127.0.0.1", server.port());
  }

  private static <T> T await(CompletableFuture<T> future) {
    return Futures.await(future, WAIT, "test call");
  }

  @BeforeEach
  void start() {
    server = server(holding(CLUSTER, ADMIN));
  }

  @AfterEach
  void stop() {
    pools.forEach(ClientPool::close);
    server.close();
  }

  @Test
  void anAnonymousConnectionGetsWhatIsOpenAndIsRefusedAndClosedForTheRest() throws Exception {
    ClientPool anonymous = pool(AuthOptions.Credentials.NONE);
    await(anonymous.call(address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class));
    TransportClient connection = await(anonymous.client(address()));

    assertThatThrownBy(
            () ->
                await(
                    anonymous.call(
                        address(), ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        // Refused on its frame's header: it is not open to anyone.
        .hasMessageContaining(
            "takes CLUSTER_STATUS_REQUEST only from a connection that proved who it is")
        .hasMessageContaining("this one did not authenticate");
    awaitClosed(connection);
  }

  @Test
  void theRightSecretOpensWhatItsIdentityMaySendAndNothingElse() {
    ClientPool member = pool(new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(CLUSTER)));
    await(member.call(address(), ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class));
    await(member.call(address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class));
    // A member is not an operator.
    assertThatThrownBy(
            () ->
                await(
                    member.call(
                        address(),
                        TransferLeaderRequest.getDefaultInstance(),
                        EmptyResponse.class)))
        .hasMessageContaining("needs a connection authenticated as admin");

    ClientPool operator = pool(new AuthOptions.Credentials(Identity.ADMIN, Optional.of(ADMIN)));
    await(
        operator.call(address(), TransferLeaderRequest.getDefaultInstance(), EmptyResponse.class));
    assertThatThrownBy(
            () ->
                await(
                    operator.call(
                        address(), ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .hasMessageContaining("needs a connection authenticated as cluster");
  }

  @Test
  void aMembersProofIsForTheServerItNamesOnly() {
    server.close();
    server = server(holding(CLUSTER, ADMIN).withSelf("worker@127.0.0.1"));
    AuthOptions.Credentials member =
        new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(CLUSTER));
    ClientPool right =
        new ClientPool(
            "right", network(AuthSettings.OFF), member, a -> Handshake.worker(a.host(), a.port()));
    pools.add(right);
    await(right.call(address(), ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class));

    // A proof meant for a master, or for another worker on this host, relayed here.
    for (String other : java.util.List.of(Handshake.MASTER, Handshake.worker("127.0.0.1", 1), "")) {
      ClientPool relayed = new ClientPool("relayed", network(AuthSettings.OFF), member, a -> other);
      pools.add(relayed);
      assertThatThrownBy(
              () ->
                  await(
                      relayed.call(
                          address(),
                          MasterStatusRequest.getDefaultInstance(),
                          EmptyResponse.class)))
          .hasMessageContaining("this is worker@127.0.0.1:" + server.port() + ", not ")
          .hasMessageContaining("a member's proof is for the server it names");
    }
  }

  @Test
  void aPoolThatSwitchesCredentialsReplacesItsConnections() throws Exception {
    ClientPool pool = pool(AuthOptions.Credentials.NONE);
    TransportClient anonymous = await(pool.client(address()));
    assertThat(anonymous.proven()).isEqualTo(Identity.ANONYMOUS);

    pool.authenticateAs(new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(CLUSTER)));
    awaitClosed(anonymous);
    await(pool.call(address(), ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class));
    TransportClient member = await(pool.client(address()));
    assertThat(member).isNotSameAs(anonymous);
    assertThat(member.proven()).isEqualTo(Identity.CLUSTER);
    // The same credentials again keep the connection.
    pool.authenticateAs(new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(CLUSTER)));
    assertThat(await(pool.client(address()))).isSameAs(member);
  }

  @Test
  void aRequestInFlightWhenThePoolSwitchesCredentialsStillGetsItsAnswer() throws Exception {
    ClientPool pool = pool(AuthOptions.Credentials.NONE);
    TransportClient anonymous = await(pool.client(address()));
    gate = new CompletableFuture<>();
    CompletableFuture<EmptyResponse> inFlight =
        pool.call(address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class);

    pool.authenticateAs(new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(CLUSTER)));
    // New requests go on a new connection that proved the new credentials, at once...
    await(pool.call(address(), ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class));
    assertThat(await(pool.client(address())).proven()).isEqualTo(Identity.CLUSTER);
    // ...while the old one stays open for what it carries, and closes once that is answered.
    assertThat(anonymous.isActive()).isTrue();
    assertThat(inFlight).isNotDone();
    gate.complete(null);
    await(inFlight);
    awaitClosed(anonymous);
  }

  @Test
  void aClientWithTheWrongSecretFindsTheServerOutBeforeSendingAnything() {
    ClientPool impostor = pool(new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(WRONG)));
    assertThatThrownBy(
            () ->
                await(
                    impostor.call(
                        address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        .hasMessageContaining("cannot authenticate to " + address() + " as cluster")
        .hasMessageContaining("the server's proof is wrong");
  }

  @Test
  void aServerWithoutTheSecretCannotPassForOne() {
    server.close();
    server = server(holding(WRONG, null));
    ClientPool member = pool(new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(CLUSTER)));
    assertThatThrownBy(
            () ->
                await(
                    member.call(
                        address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .hasMessageContaining("the server's proof is wrong");
    // A server with no admin secret refuses the identity outright.
    ClientPool operator = pool(new AuthOptions.Credentials(Identity.ADMIN, Optional.of(ADMIN)));
    assertThatThrownBy(
            () ->
                await(
                    operator.call(
                        address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .hasMessageContaining("holds no admin secret");
  }

  @Test
  void theServerRefusesAWrongProofAndClosesTheConnection() throws Exception {
    TransportClient raw = await(pool(AuthOptions.Credentials.NONE).client(address()));
    byte[] clientNonce = Handshake.nonce();
    AuthStartResponse start = authStart(raw, "cluster", clientNonce);
    byte[] wrong =
        Handshake.clientProof(
            WRONG, Identity.CLUSTER, "", clientNonce, start.getServerNonce().toByteArray());
    assertThatThrownBy(
            () ->
                await(
                    raw.call(
                        AuthFinishRequest.newBuilder()
                            .setClientProof(ByteString.copyFrom(wrong))
                            .build(),
                        AuthFinishResponse.class)))
        .hasMessageContaining("wrong proof for identity cluster");
    awaitClosed(raw);
  }

  @Test
  void aProofFromOneConnectionProvesNothingOnAnother() throws Exception {
    // A peer that watched a connection's handshake replays the client's nonce and proof.
    ClientPool anonymous = pool(AuthOptions.Credentials.NONE);
    TransportClient first = await(anonymous.client(address()));
    byte[] clientNonce = Handshake.nonce();
    AuthStartResponse seen = authStart(first, "cluster", clientNonce);
    byte[] recorded =
        Handshake.clientProof(
            CLUSTER, Identity.CLUSTER, "", clientNonce, seen.getServerNonce().toByteArray());
    first.close();
    awaitClosed(first);

    TransportClient second = await(anonymous.client(address()));
    authStart(second, "cluster", clientNonce);
    assertThatThrownBy(
            () ->
                await(
                    second.call(
                        AuthFinishRequest.newBuilder()
                            .setClientProof(ByteString.copyFrom(recorded))
                            .build(),
                        AuthFinishResponse.class)))
        .hasMessageContaining("wrong proof");
  }

  /**
   * Each connection states its wire protocol in the handshake and speaks the lower of both ends'; a
   * client of a release before versioned handshakes states none (protocol 1), and a server whose
   * cluster needs protocol 2 refuses it with an error that names both versions.
   */
  @Test
  void theHandshakeSettlesTheProtocolAndAServerRefusesOneTooOld() throws Exception {
    TransportClient current =
        await(
            pool(AuthOptions.Credentials.as(Identity.CLUSTER, holding(CLUSTER, null)))
                .client(address()));
    assertThat(current.protocol()).isEqualTo(Compatibility.PROTOCOL);
    AuthStartResponse old =
        authStart(
            await(pool(AuthOptions.Credentials.NONE).client(address())),
            "cluster",
            Handshake.nonce());
    assertThat(old.getProtocolVersion()).isEqualTo(1);

    try (TransportServer strict = server(holding(CLUSTER, ADMIN), 2)) {
      HostPort at = new HostPort("127.0.0.1", strict.port());
      TransportClient oldClient = await(pool(AuthOptions.Credentials.NONE).client(at));
      assertThatThrownBy(() -> authStart(oldClient, "cluster", Handshake.nonce()))
          .isInstanceOf(FaroException.class)
          .hasMessageContaining("speaks Faro wire protocol 1")
          .hasMessageContaining("takes 2 or newer")
          .extracting(e -> ((FaroException) e).code())
          .isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
      awaitClosed(oldClient);
      TransportClient newClient =
          await(
              pool(AuthOptions.Credentials.as(Identity.CLUSTER, holding(CLUSTER, null)))
                  .client(at));
      assertThat(newClient.protocol()).isEqualTo(2);
      await(newClient.call(ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class));
    }
  }

  @Test
  void handshakesOutOfOrderOrForUnknownIdentitiesCloseTheConnection() throws Exception {
    ClientPool anonymous = pool(AuthOptions.Credentials.NONE);
    TransportClient early = await(anonymous.client(address()));
    assertThatThrownBy(
            () ->
                await(
                    early.call(
                        AuthFinishRequest.newBuilder()
                            .setClientProof(ByteString.copyFrom(new byte[32]))
                            .build(),
                        AuthFinishResponse.class)))
        .hasMessageContaining("AuthFinish before AuthStart");
    awaitClosed(early);

    TransportClient unknown = await(anonymous.client(address()));
    assertThatThrownBy(() -> authStart(unknown, "root", Handshake.nonce()))
        .hasMessageContaining("unknown identity 'root'");
    awaitClosed(unknown);

    TransportClient shortNonce = await(anonymous.client(address()));
    assertThatThrownBy(() -> authStart(shortNonce, "cluster", new byte[3]))
        .hasMessageContaining("a client nonce has 32 bytes, not 3");
    awaitClosed(shortNonce);
  }

  @Test
  void aServerWithAuthenticationOffSaysSoToAClientThatWantsIt() {
    server.close();
    server = server(AuthSettings.OFF);
    ClientPool member = pool(new AuthOptions.Credentials(Identity.CLUSTER, Optional.of(CLUSTER)));
    assertThatThrownBy(
            () ->
                await(
                    member.call(
                        address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .hasMessageContaining("faro.auth.enabled is false here");
    // And lets everyone send everything.
    await(
        pool(AuthOptions.Credentials.NONE)
            .call(address(), ClusterStatusRequest.getDefaultInstance(), EmptyResponse.class));
  }

  @Test
  void aPoolWithoutTheSecretItShouldProveNamesTheKey() {
    ClientPool noSecret = pool(new AuthOptions.Credentials(Identity.ADMIN, Optional.empty()));
    assertThatThrownBy(
            () ->
                await(
                    noSecret.call(
                        address(), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .hasMessageContaining("holds no admin secret (faro.auth.admin.secret.file)");
  }

  @Test
  void secretsComeFromFilesThatAreCheckedAndNeverPrinted(@TempDir Path dir) throws Exception {
    Path written = dir.resolve("cluster.secret");
    Secret secret = Secret.writeNew(written);
    assertThat(Files.getPosixFilePermissions(written))
        .containsExactlyInAnyOrder(
            java.nio.file.attribute.PosixFilePermission.OWNER_READ,
            java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
    assertThat(secret.toString()).doesNotContain(Files.readString(written).strip());

    Path shortOne = Files.writeString(dir.resolve("short"), "abc\n");
    assertThatThrownBy(() -> Secret.read(shortOne, "faro.auth.cluster.secret.file"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.auth.cluster.secret.file")
        .hasMessageContaining("at least 16");
    assertThatThrownBy(() -> Secret.read(dir.resolve("missing"), "faro.auth.admin.secret.file"))
        .hasMessageContaining("faro.auth.admin.secret.file")
        .hasMessageContaining("cannot read the secret file");

    Path binary = Files.write(dir.resolve("binary"), new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1});
    assertThatThrownBy(() -> Secret.read(binary, "faro.auth.cluster.secret.file"))
        .hasMessageContaining("is not text");

    FaroConf on = FaroConf.empty().with(AuthOptions.ENABLED, "true");
    assertThatThrownBy(() -> AuthSettings.tool(on).checkedAsMember())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.auth.cluster.secret.file must name");
    AuthSettings member =
        AuthSettings.tool(on.with(AuthOptions.CLUSTER_SECRET_FILE, written.toString()))
            .checkedAsMember();
    assertThat(member.cluster()).isPresent();
    assertThat(member.admin()).isEmpty();
    // On as shipped: with nothing set, a member needs the secret too; off only when set so.
    assertThatThrownBy(() -> AuthSettings.tool(FaroConf.empty()).checkedAsMember())
        .hasMessageContaining("faro.auth.cluster.secret.file must name");
    assertThat(AuthSettings.tool(FaroConf.empty().with(AuthOptions.ENABLED, "false")))
        .isEqualTo(AuthSettings.OFF);
  }

  /** Sends AuthStart for {@code identity} with {@code clientNonce}; the server's answer. */
  private static AuthStartResponse authStart(
      TransportClient client, String identity, byte[] clientNonce) {
    return await(
        client.call(
            AuthStartRequest.newBuilder()
                .setIdentity(identity)
                .setClientNonce(ByteString.copyFrom(clientNonce))
                .build(),
            AuthStartResponse.class));
  }

  private static void awaitClosed(TransportClient client) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (client.isActive() && System.nanoTime() < deadline) {
      Thread.sleep(10); // the server closes after writing its answer: poll for it, bounded
    }
    assertThat(client.isActive()).as("the server closed the connection").isFalse();
  }
}
