package io.faro.master.raft;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The Raft port's trust: a peer's certificate must be signed by a trusted authority (the process's
 * trust manager) and name one of the masters' hosts (faro.master.raft.peers) as a subject
 * alternative name, both ways. The authorities a cluster trusts also sign its workers' and Spark
 * drivers' certificates; without the name check, any of those could talk Raft to the masters and
 * write their state.
 *
 * <p>It names no accepted issuers: an OpenSSL server sends that list once, when its context is
 * built, and a list gone stale after the trust file gained an authority would make peers renewed
 * from it send no certificate at all.
 */
final class RaftPeerTrust extends X509ExtendedTrustManager {
  private static final int SAN_DNS = 2;
  private static final int SAN_IP = 7;

  private final X509ExtendedTrustManager delegate;
  private final Set<String> masterHosts;

  RaftPeerTrust(X509ExtendedTrustManager delegate, Collection<String> masterHosts) {
    this.delegate = delegate;
    this.masterHosts =
        masterHosts.stream().map(h -> h.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    delegate.checkClientTrusted(chain, authType, socket);
    requireMasterHost(chain);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    delegate.checkClientTrusted(chain, authType, engine);
    requireMasterHost(chain);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    delegate.checkClientTrusted(chain, authType);
    requireMasterHost(chain);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    delegate.checkServerTrusted(chain, authType, socket);
    requireMasterHost(chain);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    delegate.checkServerTrusted(chain, authType, engine);
    requireMasterHost(chain);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    delegate.checkServerTrusted(chain, authType);
    requireMasterHost(chain);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return new X509Certificate[0];
  }

  private void requireMasterHost(X509Certificate[] chain) throws CertificateException {
    if (chain == null || chain.length == 0) {
      throw new CertificateException("no certificate");
    }
    List<String> names = names(chain[0]);
    for (String name : names) {
      if (masterHosts.contains(name)) {
        return;
      }
    }
    throw new CertificateException(
        "the certificate of "
            + chain[0].getSubjectX500Principal()
            + " names "
            + names
            + ", none of the masters' hosts "
            + masterHosts
            + " (faro.master.raft.peers): only masters take part in Raft");
  }

  /** The DNS and IP subject alternative names of {@code certificate}, lower case. */
  private static List<String> names(X509Certificate certificate)
      throws CertificateParsingException {
    Collection<List<?>> alternatives = certificate.getSubjectAlternativeNames();
    if (alternatives == null) {
      return List.of();
    }
    return alternatives.stream()
        .filter(
            a ->
                a.size() >= 2
                    && a.get(0) instanceof Integer type
                    && (type == SAN_DNS || type == SAN_IP))
        .map(a -> String.valueOf(a.get(1)).toLowerCase(Locale.ROOT))
        .toList();
  }
}
