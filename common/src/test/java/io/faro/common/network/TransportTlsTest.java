package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.testing.Eventually;
import io.faro.common.testing.TestCertificates;
import io.faro.common.tls.Tls;
import io.faro.proto.EmptyResponse;
import io.faro.proto.FetchChunkRequest;
import io.faro.proto.FetchChunkResponse;
import io.faro.proto.MasterStatusRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faro's ports with faro.tls.enabled: real servers and client pools on loopback with certificates
 * an authority made by keytool signed. An encrypted connection carries requests and file regions
 * (sendfile does not apply); a client without TLS, a server without TLS, a certificate of an
 * authority not trusted, one for another host and one expired are each refused with a reason; a
 * renewed certificate is used for new connections without a restart.
 */
class TransportTlsTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  @TempDir static Path certs;
  private static TestCertificates.Authority authority;
  private static TestCertificates.Issued server;
  private static TestCertificates.Issued client;

  @TempDir Path dir;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  static void makeCertificates() throws IOException {
    authority = TestCertificates.authority(certs, "faro-test-ca");
    server = authority.issue("server");
    client = authority.issue("client");
  }

  @AfterEach
  void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private static NetworkSettings network(Map<String, String> tls) {
    Map<String, String> values = new HashMap<>(tls);
    values.put("faro.network.io.threads", "1");
    values.put("faro.tls.reload.interval", "1s");
    // Encryption alone: authentication (on by default) is TransportAuthTest's.
    values.putIfAbsent("faro.auth.enabled", "false");
    return NetworkSettings.from(FaroConf.of(values));
  }

  /** Answers a status request with nothing, a fetch with {@code file}'s bytes as its body. */
  private TransportServer server(NetworkSettings settings, Path file) {
    TransportServer s =
        new TransportServer(
            "tls-test",
            "127.0.0.1",
            0,
            "faro.test.port",
            settings,
            (request, responder) -> {
              if (request.meta() instanceof FetchChunkRequest) {
                try {
                  responder.respond(
                      FetchChunkResponse.getDefaultInstance(),
                      Unpooled.wrappedBuffer(Files.readAllBytes(file)));
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              } else {
                responder.respond(EmptyResponse.getDefaultInstance());
              }
            },
            null);
    open.add(s);
    return s;
  }

  private ClientPool pool(NetworkSettings settings) {
    ClientPool p = new ClientPool("tls-test-client", settings);
    open.add(p);
    return p;
  }

  private static HostPort at(TransportServer s) {
    return new HostPort("127.0.0.1", s.port());
  }

  private static <T> T await(CompletableFuture<T> future) {
    return Futures.await(future, WAIT, "test call");
  }

  @Test
  void anEncryptedConnectionCarriesRequestsAndLargeBodies() throws IOException {
    // Several TLS records (16 KiB each), and not a multiple of one.
    byte[] data = new byte[3 * 256 * 1024 + 12345];
    new Random(7).nextBytes(data);
    Path file = Files.write(dir.resolve("chunk"), data);
    TransportServer s = server(network(server.conf()), file);
    ClientPool p = pool(network(client.conf()));

    await(p.call(at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class));
    TransportClient connection = await(p.client(at(s)));
    for (int i = 0; i < 3; i++) {
      io.faro.common.network.Frame answer =
          await(connection.send(FetchChunkRequest.getDefaultInstance(), null, WAIT));
      try {
        ByteBuf body = answer.body();
        byte[] received = new byte[body.readableBytes()];
        body.getBytes(body.readerIndex(), received);
        assertThat(received).isEqualTo(data);
      } finally {
        answer.release();
      }
    }
  }

  @Test
  void aClientWithoutTlsIsToldThePortTakesTlsOnly() {
    TransportServer s = server(network(server.conf()), dir);
    ClientPool plain = pool(network(Map.of()));

    assertThatThrownBy(
            () ->
                await(
                    plain.call(
                        at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        .hasMessageContaining("takes TLS connections only")
        .hasMessageContaining("faro.tls.enabled");
    // The server goes on serving encrypted clients.
    await(
        pool(network(client.conf()))
            .call(at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class));
  }

  @Test
  void aTlsClientOfAServerWithoutTlsFailsItsHandshakeWithAReason() {
    TransportServer s = server(network(Map.of()), dir);
    ClientPool p = pool(network(client.conf()));

    assertThatThrownBy(
            () ->
                await(p.call(at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        // The server closed the connection: no certificate was refused, a retry may meet TLS.
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED))
        .hasMessageContaining("TLS handshake with 127.0.0.1:" + s.port() + " failed")
        .hasMessageContaining("does that port take TLS");
  }

  @Test
  void aCertificateOfAnAuthorityNotTrustedIsRefused() throws IOException {
    TestCertificates.Authority other = TestCertificates.authority(dir, "other-ca");
    TestCertificates.Issued stranger = other.issue("stranger");
    TransportServer s = server(network(stranger.conf()), dir);
    ClientPool p = pool(network(client.conf()));

    assertThatThrownBy(
            () ->
                await(p.call(at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        .hasMessageContaining("TLS handshake with")
        .hasMessageContaining("certification path");
  }

  @Test
  void aCertificateForAnotherHostIsRefusedUnlessHostNamesAreNotVerified() {
    // The certificate names 127.0.0.1 and localhost; this server is reached as 127.0.0.2.
    TransportServer s =
        new TransportServer(
            "tls-test-other-host",
            "127.0.0.2",
            0,
            "faro.test.port",
            network(server.conf()),
            (request, responder) -> responder.respond(EmptyResponse.getDefaultInstance()),
            null);
    open.add(s);
    HostPort other = new HostPort("127.0.0.2", s.port());

    assertThatThrownBy(
            () ->
                await(
                    pool(network(client.conf()))
                        .call(
                            other, MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .isInstanceOf(FaroException.class)
        .hasMessageContaining("TLS handshake with 127.0.0.2")
        .hasMessageContaining("127.0.0.2");

    Map<String, String> lax = new HashMap<>(client.conf());
    lax.put("faro.tls.verify.hostname", "false");
    await(
        pool(network(lax))
            .call(other, MasterStatusRequest.getDefaultInstance(), EmptyResponse.class));
  }

  @Test
  void anExpiredCertificateIsRefusedByClientsAndNotLoadedByServers() throws Exception {
    // Valid for one day that ends a few seconds from now.
    TestCertificates.Issued expiring = authority.issue("expiring", "-1d+6S", 1);
    TransportServer s = server(network(expiring.conf()), dir);
    ClientPool p = pool(network(client.conf()));
    await(p.call(at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class));

    Eventually.await(
        "the certificate expired",
        Duration.ofSeconds(15),
        () -> {
          try {
            X509Certificate c =
                (X509Certificate)
                    java.security.cert.CertificateFactory.getInstance("X.509")
                        .generateCertificate(Files.newInputStream(expiring.chain()));
            return c.getNotAfter().getTime() < System.currentTimeMillis();
          } catch (Exception e) {
            return false;
          }
        });
    ClientPool later = pool(network(client.conf()));
    assertThatThrownBy(
            () ->
                await(
                    later.call(
                        at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class)))
        .isInstanceOf(FaroException.class)
        .hasMessageContaining("TLS handshake with")
        .hasMessageContaining("expired");

    // A process does not start with it.
    assertThatThrownBy(() -> network(expiring.conf()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.tls.cert.chain.file")
        .hasMessageContaining("not now");
  }

  @Test
  void aRenewedCertificateServesNewConnectionsWithoutARestart() throws Exception {
    Path chain = dir.resolve("chain.pem");
    Path key = dir.resolve("key.pem");
    Files.copy(server.chain(), chain);
    Files.copy(server.key(), key);
    Map<String, String> conf = new HashMap<>(server.conf());
    conf.put("faro.tls.cert.chain.file", chain.toString());
    conf.put("faro.tls.key.file", key.toString());
    TransportServer s = server(network(conf), dir);
    assertThat(subjectServedBy(s)).contains("CN=server");

    TestCertificates.Issued renewed = authority.issue("renewed");
    // A renewal half done is not taken, and the old certificate stays: a key file cut short, then
    // the new certificate beside the old key.
    Files.writeString(key, "-----BEGIN PRIVATE KEY-----\nAAAA\n");
    Thread.sleep(1_500); // past faro.tls.reload.interval (1s) so the next handshake looks
    assertThat(subjectServedBy(s)).contains("CN=server");
    Files.copy(server.key(), key, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(renewed.chain(), chain, StandardCopyOption.REPLACE_EXISTING);
    // Again past the reload interval: what is checked is that nothing changes, so there is no
    // condition to wait for.
    Thread.sleep(1_500);
    assertThat(subjectServedBy(s)).contains("CN=server");

    Files.copy(renewed.key(), key, StandardCopyOption.REPLACE_EXISTING);
    Eventually.await(
        "the renewed certificate is served",
        Duration.ofSeconds(10),
        () -> subjectServedBy(s).contains("CN=renewed"));
    // And Faro's own clients accept it.
    await(
        pool(network(client.conf()))
            .call(at(s), MasterStatusRequest.getDefaultInstance(), EmptyResponse.class));
  }

  /** The subject of the certificate {@code s} presents to a new connection. */
  private static String subjectServedBy(TransportServer s) {
    try {
      return presentedSubject(s);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String presentedSubject(TransportServer s) throws Exception {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {new AcceptAll()}, null);
    try (SSLSocket socket =
        (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", s.port())) {
      socket.startHandshake();
      return ((X509Certificate) socket.getSession().getPeerCertificates()[0])
          .getSubjectX500Principal()
          .getName();
    }
  }

  /** Looks at a certificate without judging it. */
  private static final class AcceptAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  @Test
  void tlsOffAddsNothing() {
    assertThat(network(Map.of()).tls()).isSameAs(Tls.OFF);
    assertThat(Tls.OFF.enabled()).isFalse();
  }
}
