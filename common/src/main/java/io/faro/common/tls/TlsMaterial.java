package io.faro.common.tls;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.faro.common.config.ConfigException;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process's certificate, key and trusted authorities, as a key manager and a trust manager that
 * always use the newest set that loaded: at a handshake at least {@code reloadInterval} after the
 * last look, it compares the files' modification times and sizes and loads them again when any
 * changed. A set that fails to load (a file half-written by a renewal) is logged and the previous
 * one kept, so a renewal never takes a port down; open connections keep the certificate they
 * started with.
 */
final class TlsMaterial {
  private static final Logger LOG = LoggerFactory.getLogger(TlsMaterial.class);
  private static final char[] NO_PASSWORD = new char[0];

  private final Path chainFile;
  private final Path keyFile;
  private final Path trustFile;
  private final long reloadNanos;
  private volatile Loaded current;
  // The set before the current one: a handshake that chose its alias from it finds it again.
  private volatile Loaded previous;
  private volatile long nextLookNanos;
  private int generations;

  private record Stamp(long modified, long size) {}

  private record Loaded(
      int generation,
      List<Stamp> stamps,
      X509ExtendedKeyManager keys,
      X509ExtendedTrustManager trust,
      X509Certificate leaf) {}

  /**
   * Loads the three files now.
   *
   * @throws ConfigException naming the key of a file that is missing or does not load
   */
  TlsMaterial(Path chainFile, Path keyFile, Path trustFile, Duration reloadInterval) {
    this.chainFile = chainFile;
    this.keyFile = keyFile;
    this.trustFile = trustFile;
    this.reloadNanos = reloadInterval.toNanos();
    this.current = load();
    this.nextLookNanos = System.nanoTime() + reloadNanos;
    LOG.info(
        "TLS certificate {} (valid until {}), trusting the authorities in {}",
        current.leaf.getSubjectX500Principal(),
        current.leaf.getNotAfter().toInstant(),
        trustFile);
  }

  /** The key manager: this process's certificate, as of the newest set that loaded. */
  X509ExtendedKeyManager keyManager() {
    return new Keys();
  }

  /**
   * The trust manager: the authorities accepted, as of the newest set that loaded.
   *
   * @param checkHostname false: a server's certificate is not checked against the host name even
   *     where the connection asks for it (gRPC, on the Raft port, always does)
   */
  X509ExtendedTrustManager trustManager(boolean checkHostname) {
    return new Trust(checkHostname);
  }

  private Loaded current() {
    long now = System.nanoTime();
    if (now - nextLookNanos >= 0) {
      synchronized (this) {
        if (now - nextLookNanos >= 0) {
          nextLookNanos = now + reloadNanos;
          reloadIfChanged();
        }
      }
    }
    return current;
  }

  private void reloadIfChanged() {
    List<Stamp> stamps;
    try {
      stamps = stamps();
    } catch (IOException e) {
      LOG.warn("TLS files cannot be looked at ({}); keeping the certificate loaded before", e);
      return;
    }
    if (stamps.equals(current.stamps)) {
      return;
    }
    try {
      Loaded next = load();
      previous = current;
      current = next;
      LOG.info(
          "TLS files changed: now using certificate {} (valid until {}) for new connections",
          next.leaf.getSubjectX500Principal(),
          next.leaf.getNotAfter().toInstant());
    } catch (ConfigException e) {
      LOG.warn(
          "TLS files changed but do not load ({}); keeping the certificate loaded before, and "
              + "trying again in {} s",
          e.getMessage(),
          reloadNanos / 1_000_000_000L);
    }
  }

  private List<Stamp> stamps() throws IOException {
    return List.of(stamp(chainFile), stamp(keyFile), stamp(trustFile));
  }

  private static Stamp stamp(Path file) throws IOException {
    return new Stamp(Files.getLastModifiedTime(file).toMillis(), Files.size(file));
  }

  private synchronized Loaded load() {
    List<Stamp> before;
    try {
      before = stamps();
    } catch (IOException e) {
      before = List.of();
    }
    List<X509Certificate> chain =
        PemFiles.certificates(chainFile, TlsOptions.CERT_CHAIN_FILE.key());
    PrivateKey key = PemFiles.privateKey(keyFile, TlsOptions.KEY_FILE.key());
    List<X509Certificate> authorities =
        PemFiles.certificates(trustFile, TlsOptions.TRUST_FILE.key());
    try {
      chain.get(0).checkValidity();
    } catch (CertificateException e) {
      throw new ConfigException(
          TlsOptions.CERT_CHAIN_FILE.key()
              + ": the certificate in "
              + chainFile
              + " is valid from "
              + chain.get(0).getNotBefore().toInstant()
              + " to "
              + chain.get(0).getNotAfter().toInstant()
              + ", not now: peers would refuse it");
    }
    if (!belongTogether(key, chain.get(0))) {
      throw new ConfigException(
          TlsOptions.KEY_FILE.key()
              + ": the key in "
              + keyFile
              + " ("
              + key.getAlgorithm()
              + ") is not the key of the certificate in "
              + chainFile
              + " (a renewal that replaced one file and not yet the other?)");
    }
    try {
      KeyStore own = KeyStore.getInstance("PKCS12");
      own.load(null, null);
      own.setKeyEntry("faro", key, NO_PASSWORD, chain.toArray(X509Certificate[]::new));
      KeyManagerFactory keys = KeyManagerFactory.getInstance("NewSunX509");
      keys.init(own, NO_PASSWORD);
      KeyStore trusted = KeyStore.getInstance("PKCS12");
      trusted.load(null, null);
      for (int i = 0; i < authorities.size(); i++) {
        trusted.setCertificateEntry("authority-" + i, authorities.get(i));
      }
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(trusted);
      return new Loaded(
          ++generations,
          before,
          (X509ExtendedKeyManager) keys.getKeyManagers()[0],
          (X509ExtendedTrustManager) trust.getTrustManagers()[0],
          chain.get(0));
    } catch (GeneralSecurityException | IOException e) {
      throw new ConfigException(
          TlsOptions.KEY_FILE.key()
              + ": the key in "
              + keyFile
              + " and the certificate in "
              + chainFile
              + " do not load together: "
              + e);
    }
  }

  /**
   * Whether {@code key} is the private key of {@code certificate}: a signature made with it
   * verifies with the certificate's public key (for the usual algorithms; others are only compared
   * by algorithm).
   */
  private static boolean belongTogether(PrivateKey key, X509Certificate certificate) {
    if (!certificate.getPublicKey().getAlgorithm().equals(key.getAlgorithm())) {
      return false;
    }
    String algorithm =
        switch (key.getAlgorithm()) {
          case "EC" -> "SHA256withECDSA";
          case "RSA" -> "SHA256withRSA";
          case "Ed25519", "Ed448", "EdDSA" -> key.getAlgorithm();
          default -> null;
        };
    if (algorithm == null) {
      return true;
    }
    try {
      byte[] probe = "faro: does this key belong to this certificate".getBytes(UTF_8);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /**
   * The loaded set an alias came from: {@link Keys} prefixes each alias it chooses with the
   * generation of the set it chose from, so that the certificate and the key of one handshake come
   * from one set even when the files are reloaded during it.
   */
  private Loaded setOf(String alias) {
    Loaded now = current();
    int colon = alias == null ? -1 : alias.indexOf(':');
    if (colon < 0) {
      return now;
    }
    String generation = alias.substring(0, colon);
    Loaded before = previous;
    if (before != null && generation.equals(Integer.toString(before.generation))) {
      return before;
    }
    return now;
  }

  private static String tagged(Loaded set, String alias) {
    return alias == null ? null : set.generation + ":" + alias;
  }

  private static String untagged(String alias) {
    int colon = alias == null ? -1 : alias.indexOf(':');
    return colon < 0 ? alias : alias.substring(colon + 1);
  }

  /** Delegates to the newest loaded key manager. */
  private final class Keys extends X509ExtendedKeyManager {
    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      Loaded set = current();
      String[] aliases = set.keys.getClientAliases(keyType, issuers);
      return aliases == null
          ? null
          : Arrays.stream(aliases).map(a -> tagged(set, a)).toArray(String[]::new);
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      Loaded set = current();
      return tagged(set, set.keys.chooseClientAlias(keyType, issuers, socket));
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
      Loaded set = current();
      return tagged(set, set.keys.chooseEngineClientAlias(keyType, issuers, engine));
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      Loaded set = current();
      String[] aliases = set.keys.getServerAliases(keyType, issuers);
      return aliases == null
          ? null
          : Arrays.stream(aliases).map(a -> tagged(set, a)).toArray(String[]::new);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      Loaded set = current();
      return tagged(set, set.keys.chooseServerAlias(keyType, issuers, socket));
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
      Loaded set = current();
      return tagged(set, set.keys.chooseEngineServerAlias(keyType, issuers, engine));
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return setOf(alias).keys.getCertificateChain(untagged(alias));
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return setOf(alias).keys.getPrivateKey(untagged(alias));
    }
  }

  /** Delegates to the newest loaded trust manager. */
  private final class Trust extends X509ExtendedTrustManager {
    private final boolean checkHostname;

    Trust(boolean checkHostname) {
      this.checkHostname = checkHostname;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      current().trust.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      if (checkHostname) {
        current().trust.checkServerTrusted(chain, authType, socket);
      } else {
        current().trust.checkServerTrusted(chain, authType);
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      current().trust.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      if (checkHostname) {
        current().trust.checkServerTrusted(chain, authType, engine);
      } else {
        current().trust.checkServerTrusted(chain, authType);
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      current().trust.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      current().trust.checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return current().trust.getAcceptedIssuers();
    }
  }

  @Override
  public String toString() {
    return "TlsMaterial(" + chainFile + ", " + Objects.toString(trustFile) + ")";
  }
}
