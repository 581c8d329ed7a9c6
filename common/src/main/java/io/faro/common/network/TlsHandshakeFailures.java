package io.faro.common.network;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * Says why a client's TLS handshake failed, as the error its requests fail with: UNAUTHENTICATED
 * when a certificate was refused (final), CONNECTION_FAILED when the connection was lost or slow
 * during the handshake (a server stopping, one over its connection limit), which callers try again
 * or elsewhere. The message names the certificate problem itself, not the exceptions wrapping it.
 */
final class TlsHandshakeFailures {
  private TlsHandshakeFailures() {}

  /** The failure of the TLS handshake with {@code address} that failed with {@code cause}. */
  static FaroException failure(HostPort address, Throwable cause) {
    return new FaroException(
        certificateRefused(cause) ? ErrorCode.UNAUTHENTICATED : ErrorCode.CONNECTION_FAILED,
        "TLS handshake with "
            + address
            + " failed: "
            + reason(cause)
            + " (does that port take TLS, and is its certificate "
            + "valid, for that host, and signed by an authority in "
            + "faro.tls.trust.file?)",
        cause);
  }

  /** Whether a handshake failed on a certificate (one side refused the other's), not on I/O. */
  static boolean certificateRefused(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof CertificateException
          || t instanceof CertPathValidatorException
          || t instanceof CertPathBuilderException
          || t instanceof SSLPeerUnverifiedException
          || (t instanceof SSLHandshakeException
              && String.valueOf(t.getMessage()).contains("alert"))) {
        return true;
      }
    }
    return false;
  }

  /** The innermost cause of a failed handshake: the certificate problem, not its wrappers. */
  static String reason(Throwable cause) {
    Throwable root = cause;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String why =
        root instanceof CertificateExpiredException
            ? "the certificate expired (" + root.getMessage() + ")"
            : root instanceof CertificateNotYetValidException
                ? "the certificate is not valid yet (" + root.getMessage() + ")"
                : root.getMessage();
    return root == cause ? String.valueOf(cause) : cause.getMessage() + ": " + why;
  }
}
