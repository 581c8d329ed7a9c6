package io.faro.common.tls;

import static io.faro.common.config.ConfigOption.booleanOption;
import static io.faro.common.config.ConfigOption.durationOption;
import static io.faro.common.config.ConfigOption.enumOption;
import static io.faro.common.config.ConfigOption.stringOption;

import io.faro.common.config.ConfigOption;
import java.time.Duration;
import java.util.List;

/** Encryption of Faro's traffic: the certificate, key and trusted authorities of a process. */
public final class TlsOptions {
  /** Which TLS implementation encrypts the traffic. */
  public enum Provider {
    /** OpenSSL (netty-tcnative) where it loads, else the JDK's. */
    AUTO,
    /** The JDK's own TLS. */
    JDK,
    /** OpenSSL through netty-tcnative; the process does not start where it does not load. */
    OPENSSL
  }

  public static final ConfigOption<Boolean> ENABLED =
      booleanOption(
          "faro.tls.enabled",
          false,
          "Encrypt every connection to a Faro port with TLS: masters' RPC and Raft ports, workers' "
              + "RPC, push and fetch ports, and a Spark driver's lifecycle port. Every process then "
              + "needs faro.tls.cert.chain.file, faro.tls.key.file and faro.tls.trust.file; a "
              + "connection without TLS is refused with an error naming this key. Clients check "
              + "the server's certificate against the trusted authorities (and its host name, "
              + "see faro.tls.verify.hostname); masters also check each other's on the Raft port "
              + "(mutual TLS, and only a certificate naming a master's host of "
              + "faro.master.raft.peers), so no other process can join the group. "
              + "Who may do what stays with faro.auth.enabled. Set the same value everywhere, "
              + "Spark applications included (spark.faro.tls.*).");
  public static final ConfigOption<String> CERT_CHAIN_FILE =
      stringOption(
          "faro.tls.cert.chain.file",
          "",
          "With faro.tls.enabled: a PEM file with this process's certificate, then the "
              + "intermediate certificates up to a trusted authority. Re-read when it changes "
              + "(faro.tls.reload.interval): new connections use the new certificate.");
  public static final ConfigOption<String> KEY_FILE =
      stringOption(
          "faro.tls.key.file",
          "",
          "With faro.tls.enabled: a PEM file with the certificate's private key, unencrypted "
              + "PKCS#8 (\"BEGIN PRIVATE KEY\"; openssl pkcs8 -topk8 -nocrypt converts other "
              + "forms), readable by the Faro user only. Re-read with the certificate.");
  public static final ConfigOption<String> TRUST_FILE =
      stringOption(
          "faro.tls.trust.file",
          "",
          "With faro.tls.enabled: a PEM file with the certificates of the authorities whose "
              + "certificates this process accepts from its peers. Re-read when it changes.");
  public static final ConfigOption<Boolean> VERIFY_HOSTNAME =
      booleanOption(
          "faro.tls.verify.hostname",
          true,
          "With faro.tls.enabled: a client accepts a server's certificate only when it names the "
              + "host the client connected to (a DNS or IP subject alternative name), so that one "
              + "member's certificate cannot stand in for another's. Turn off only where all "
              + "members share one certificate.");
  public static final ConfigOption<Duration> RELOAD_INTERVAL =
      durationOption(
          "faro.tls.reload.interval",
          "60s",
          Duration.ofSeconds(1),
          "How often a process looks whether its certificate, key or trust file changed (their "
              + "modification time and size), at the next handshake after this interval. A "
              + "changed set that does not load (a half-written file) is logged and the previous "
              + "one kept.");
  public static final ConfigOption<Provider> PROVIDER =
      enumOption(
          "faro.tls.provider",
          Provider.AUTO,
          Provider.class,
          "The TLS implementation: auto (OpenSSL through netty-tcnative where it loads, as on "
              + "Faro's Linux x86_64 and aarch64 servers; else the JDK's), jdk, or openssl. Spark "
              + "applications carry no OpenSSL: leave it at auto there.");

  public static final List<ConfigOption<?>> ALL =
      List.of(
          ENABLED,
          CERT_CHAIN_FILE,
          KEY_FILE,
          TRUST_FILE,
          VERIFY_HOSTNAME,
          RELOAD_INTERVAL,
          PROVIDER);

  private TlsOptions() {}
}
