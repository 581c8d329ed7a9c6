package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import java.io.IOException;
import java.security.cert.CertificateExpiredException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** A refused certificate is final and named by its own problem; a lost connection is not. */
class TlsHandshakeFailuresTest {
  private static final HostPort SERVER = new HostPort("worker-1", 9097);

  @Test
  void aRefusedCertificateIsUnauthenticatedAndNamedByItsRoot() {
    SSLHandshakeException wrapped = new SSLHandshakeException("PKIX path validation failed");
    wrapped.initCause(new CertificateExpiredException("NotAfter: yesterday"));
    FaroException failure = TlsHandshakeFailures.failure(SERVER, wrapped);
    assertThat(failure.code()).isEqualTo(ErrorCode.UNAUTHENTICATED);
    assertThat(failure.getMessage())
        .startsWith(
            "TLS handshake with worker-1:9097 failed: PKIX path validation failed: the"
                + " certificate expired (NotAfter: yesterday)")
        .endsWith("faro.tls.trust.file?)");
    assertThat(failure.getCause()).isSameAs(wrapped);
  }

  @Test
  void aConnectionLostDuringTheHandshakeCanBeTriedAgain() {
    IOException lost = new IOException("Connection reset");
    FaroException failure = TlsHandshakeFailures.failure(SERVER, lost);
    assertThat(failure.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
    assertThat(TlsHandshakeFailures.reason(lost)).isEqualTo(String.valueOf(lost));
    assertThat(TlsHandshakeFailures.certificateRefused(new SSLHandshakeException("fatal alert")))
        .isTrue();
  }
}
