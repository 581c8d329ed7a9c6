package io.faro.master.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.common.testing.TestCertificates;
import io.faro.common.tls.Tls;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Raft port takes a certificate only when a trusted authority signed it and it names a master's
 * host: a worker's or a Spark driver's certificate from the same authority is refused, both as a
 * client of the port and as the server a master reaches.
 */
class RaftPeerTrustTest {
  @TempDir static Path dir;
  private static TestCertificates.Authority authority;
  private static RaftPeerTrust trust;

  @BeforeAll
  static void setUp() throws IOException {
    authority = TestCertificates.authority(dir, "cluster-ca");
    TestCertificates.Issued own = authority.issue("m1", null, 30, "dns:m1.example");
    Tls tls = Tls.from(FaroConf.of(own.conf()));
    trust = new RaftPeerTrust(tls.trustManager(), List.of("m1.example", "M2.example", "10.0.0.3"));
  }

  private static X509Certificate[] chain(TestCertificates.Issued issued) throws IOException {
    try (InputStream in = Files.newInputStream(issued.chain())) {
      return CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
          .map(X509Certificate.class::cast)
          .toArray(X509Certificate[]::new);
    } catch (CertificateException e) {
      throw new IOException(e);
    }
  }

  @Test
  void aMastersCertificateIsTakenByNameOrAddress() throws IOException {
    X509Certificate[] m2 = chain(authority.issue("m2", null, 30, "dns:m2.example"));
    X509Certificate[] m3 = chain(authority.issue("m3", null, 30, "ip:10.0.0.3"));
    assertThatCode(() -> trust.checkClientTrusted(m2, "ECDHE_ECDSA")).doesNotThrowAnyException();
    assertThatCode(() -> trust.checkServerTrusted(m3, "ECDHE_ECDSA")).doesNotThrowAnyException();
  }

  @Test
  void aWorkersCertificateFromTheSameAuthorityIsRefused() throws IOException {
    X509Certificate[] worker = chain(authority.issue("w1", null, 30, "dns:w1.example"));
    assertThatThrownBy(() -> trust.checkClientTrusted(worker, "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class)
        .hasMessageContaining("[w1.example]")
        .hasMessageContaining("none of the masters' hosts")
        .hasMessageContaining("faro.master.raft.peers");
    assertThatThrownBy(() -> trust.checkServerTrusted(worker, "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class);
  }

  @Test
  void aMastersNameFromAnotherAuthorityIsRefused() throws IOException {
    TestCertificates.Authority other = TestCertificates.authority(dir.resolve("other"), "other");
    X509Certificate[] impostor = chain(other.issue("m2", null, 30, "dns:m2.example"));
    assertThatThrownBy(() -> trust.checkClientTrusted(impostor, "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class);
  }

  @Test
  void itNamesNoIssuers() {
    // An OpenSSL server would send a list fixed at start; peers renewed from a new authority
    // would then send no certificate.
    assertThat(trust.getAcceptedIssuers()).isEmpty();
  }
}
