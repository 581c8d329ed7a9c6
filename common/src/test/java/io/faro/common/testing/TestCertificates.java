package io.faro.common.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Certificate authorities and the certificates they sign, made with the JDK's keytool (no library
 * needed) for tests of TLS: PEM files as an operator would give Faro.
 */
public final class TestCertificates {
  private static final String PASSWORD = "faro-test";

  private TestCertificates() {}

  /** A new authority named {@code name}, its files in {@code dir}. */
  public static Authority authority(Path dir, String name) throws IOException {
    Files.createDirectories(dir);
    Path store = dir.resolve(name + ".p12");
    Files.deleteIfExists(store);
    keytool(
        "-genkeypair",
        "-alias",
        "ca",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=" + name,
        "-ext",
        "bc:c",
        "-validity",
        "30",
        "-keystore",
        store.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        PASSWORD);
    Path pem = dir.resolve(name + ".pem");
    keytool(
        "-exportcert",
        "-alias",
        "ca",
        "-rfc",
        "-keystore",
        store.toString(),
        "-storepass",
        PASSWORD,
        "-file",
        pem.toString());
    return new Authority(dir, name, store, pem);
  }

  /** An authority's key store and its certificate (the trust file of those it signs for). */
  public record Authority(Path dir, String name, Path store, Path pem) {
    /** A certificate for 127.0.0.1 and localhost, valid from now for 30 days. */
    public Issued issue(String subject) throws IOException {
      return issue(subject, null, 30);
    }

    /**
     * A certificate for 127.0.0.1 and localhost.
     *
     * @param start keytool's -startdate (e.g. "-1d+5S"), or null for now
     * @param days how many days from {@code start} it is valid
     */
    public Issued issue(String subject, String start, int days) throws IOException {
      return issue(subject, start, days, "ip:127.0.0.1,dns:localhost");
    }

    /**
     * A certificate naming {@code names} (keytool's san extension, e.g. "dns:w1.example"),
     * otherwise as {@link #issue(String, String, int)}.
     */
    public Issued issue(String subject, String start, int days, String names) throws IOException {
      Path store = dir.resolve(subject + ".p12");
      Files.deleteIfExists(store);
      keytool(
          "-genkeypair",
          "-alias",
          "host",
          "-keyalg",
          "EC",
          "-groupname",
          "secp256r1",
          "-dname",
          "CN=" + subject,
          "-keystore",
          store.toString(),
          "-storetype",
          "PKCS12",
          "-storepass",
          PASSWORD);
      Path request = dir.resolve(subject + ".csr");
      keytool(
          "-certreq",
          "-alias",
          "host",
          "-keystore",
          store.toString(),
          "-storepass",
          PASSWORD,
          "-file",
          request.toString());
      Path chain = dir.resolve(subject + "-chain.pem");
      List<String> sign =
          new ArrayList<>(
              List.of(
                  "-gencert",
                  "-alias",
                  "ca",
                  "-keystore",
                  store().toString(),
                  "-storepass",
                  PASSWORD,
                  "-infile",
                  request.toString(),
                  "-outfile",
                  chain.toString(),
                  "-rfc",
                  "-ext",
                  "san=" + names,
                  "-validity",
                  String.valueOf(days)));
      if (start != null) {
        sign.add("-startdate");
        sign.add(start);
      }
      keytool(sign.toArray(String[]::new));
      Path key = dir.resolve(subject + "-key.pem");
      writeKey(store, key);
      return new Issued(subject, chain, key, pem);
    }
  }

  /** A certificate, its private key and the authority that signed it, as PEM files. */
  public record Issued(String subject, Path chain, Path key, Path trust) {
    /** The faro.tls.* settings of a process using this certificate. */
    public Map<String, String> conf() {
      return Map.of(
          "faro.tls.enabled", "true",
          "faro.tls.cert.chain.file", chain.toString(),
          "faro.tls.key.file", key.toString(),
          "faro.tls.trust.file", trust.toString());
    }
  }

  private static void writeKey(Path store, Path key) throws IOException {
    try (InputStream in = Files.newInputStream(store)) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(in, PASSWORD.toCharArray());
      PrivateKey privateKey = (PrivateKey) keys.getKey("host", PASSWORD.toCharArray());
      String pem =
          "-----BEGIN PRIVATE KEY-----\n"
              + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                  .encodeToString(privateKey.getEncoded())
              + "\n-----END PRIVATE KEY-----\n";
      Files.writeString(key, pem);
      try {
        Files.setPosixFilePermissions(
            key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
      } catch (UnsupportedOperationException e) {
        // Not a POSIX file system.
      }
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot read the key of " + store, e);
    }
  }

  private static void keytool(String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException("keytool did not finish in 60 s: " + command);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.exitValue() != 0) {
      throw new IOException("keytool failed: " + command + "\n" + output);
    }
  }
}
