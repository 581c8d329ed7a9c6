package io.faro.common.tls;

import io.faro.common.auth.Secret;
import io.faro.common.config.ConfigException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/** Reads PEM certificates and PKCS#8 private keys; every failure names the config key. */
final class PemFiles {
  /** Largest PEM file read: a long chain or a bundle of authorities, never a data file. */
  private static final long MAX_FILE_BYTES = 1 << 20;

  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";
  private static final List<String> KEY_ALGORITHMS =
      List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS");

  private PemFiles() {}

  /** The certificates in {@code file}, in file order; at least one. */
  static List<X509Certificate> certificates(Path file, String key) {
    byte[] bytes = read(file, key);
    try {
      List<X509Certificate> certificates =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(bytes))
              .stream()
              .map(X509Certificate.class::cast)
              .toList();
      if (certificates.isEmpty()) {
        throw new ConfigException(key + ": " + file + " holds no PEM certificate");
      }
      return certificates;
    } catch (CertificateException e) {
      throw new ConfigException(
          key + ": " + file + " is not a PEM certificate file (\"BEGIN CERTIFICATE\"): " + e);
    }
  }

  /** The PKCS#8 private key in {@code file}. */
  static PrivateKey privateKey(Path file, String key) {
    byte[] bytes = read(file, key);
    String text = new String(bytes, StandardCharsets.US_ASCII);
    Arrays.fill(bytes, (byte) 0);
    int begin = text.indexOf(KEY_BEGIN);
    int end = text.indexOf(KEY_END);
    if (begin < 0 || end < begin) {
      String hint =
          text.contains("BEGIN ENCRYPTED PRIVATE KEY")
              ? "an encrypted key; give it unencrypted (openssl pkcs8 -topk8 -nocrypt), in a file "
                  + "only the Faro user may read"
              : text.contains("BEGIN RSA PRIVATE KEY") || text.contains("BEGIN EC PRIVATE KEY")
                  ? "a PKCS#1 or SEC1 key; convert it to PKCS#8 with openssl pkcs8 -topk8 -nocrypt "
                      + "-in KEY -out KEY8"
                  : "not a PEM private key (\"" + KEY_BEGIN + "\")";
      throw new ConfigException(key + ": " + file + " is " + hint);
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(text.substring(begin + KEY_BEGIN.length(), end).strip());
    } catch (IllegalArgumentException e) {
      throw new ConfigException(key + ": " + file + ": the key is not valid base64: " + e);
    }
    try {
      PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
      for (String algorithm : KEY_ALGORITHMS) {
        try {
          PrivateKey parsed = KeyFactory.getInstance(algorithm).generatePrivate(spec);
          Secret.warnIfShared(file, key, "private key file");
          return parsed;
        } catch (GeneralSecurityException e) {
          // Not this algorithm; try the next.
        }
      }
    } finally {
      Arrays.fill(der, (byte) 0);
    }
    throw new ConfigException(
        key + ": " + file + " holds a key of none of the algorithms " + KEY_ALGORITHMS);
  }

  private static byte[] read(Path file, String key) {
    if (file.toString().isEmpty()) {
      throw new ConfigException(key + " must name a PEM file when faro.tls.enabled is true");
    }
    try {
      long size = Files.size(file);
      if (size > MAX_FILE_BYTES) {
        throw new ConfigException(
            key
                + ": "
                + file
                + " has "
                + size
                + " bytes, a PEM file here at most "
                + MAX_FILE_BYTES);
      }
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new ConfigException(key + ": cannot read " + file + ": " + e);
    }
  }
}
