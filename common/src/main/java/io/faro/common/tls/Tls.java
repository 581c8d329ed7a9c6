package io.faro.common.tls;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OptionalSslHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.AttributeKey;
import java.nio.file.Path;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS of one process ({@link TlsOptions}): the handlers its servers and client pools put first
 * in each connection's pipeline, and the key and trust managers the Raft port shares. Off, it adds
 * nothing. Thread-safe; one per process, made from its config at start, which fails with the key to
 * fix when a file is missing or does not load.
 *
 * <p>A server port with TLS looks at the first bytes of each connection: a TLS handshake gets the
 * encrypting handler; anything else is marked {@linkplain #unencrypted unencrypted}, so that the
 * server answers its first request with an error saying the port takes TLS only, then closes it.
 */
public final class Tls {
  private static final Logger LOG = LoggerFactory.getLogger(Tls.class);

  /** No TLS. */
  public static final Tls OFF = new Tls();

  private static final AttributeKey<Boolean> UNENCRYPTED =
      AttributeKey.valueOf(Tls.class, "unencrypted");

  /** The encrypting handler's name in a pipeline. */
  private static final String HANDLER = "tls";

  private final TlsMaterial material;
  private final SslContext server;
  private final SslContext client;
  private final SslProvider provider;
  private final boolean verifyHostname;

  private Tls() {
    this.material = null;
    this.server = null;
    this.client = null;
    this.provider = null;
    this.verifyHostname = false;
  }

  private Tls(TlsMaterial material, SslProvider provider, boolean verifyHostname) {
    this.material = material;
    this.provider = provider;
    this.verifyHostname = verifyHostname;
    try {
      this.server =
          SslContextBuilder.forServer(material.keyManager())
              .trustManager(material.trustManager(verifyHostname))
              .clientAuth(ClientAuth.NONE)
              .sslProvider(provider)
              .build();
      this.client =
          SslContextBuilder.forClient()
              .keyManager(material.keyManager())
              .trustManager(material.trustManager(verifyHostname))
              .sslProvider(provider)
              .build();
    } catch (SSLException e) {
      throw new ConfigException("TLS cannot be set up with " + material + ": " + e);
    }
  }

  /**
   * The TLS {@code conf} asks for: {@link #OFF}, or the loaded certificate, key and authorities.
   *
   * @throws ConfigException naming the key of a file that is missing or does not load, or of a
   *     provider that is not available
   */
  public static Tls from(FaroConf conf) {
    if (!conf.get(TlsOptions.ENABLED)) {
      return OFF;
    }
    TlsMaterial material =
        new TlsMaterial(
            Path.of(conf.get(TlsOptions.CERT_CHAIN_FILE)),
            Path.of(conf.get(TlsOptions.KEY_FILE)),
            Path.of(conf.get(TlsOptions.TRUST_FILE)),
            conf.get(TlsOptions.RELOAD_INTERVAL));
    SslProvider provider =
        switch (conf.get(TlsOptions.PROVIDER)) {
          case JDK -> SslProvider.JDK;
          case OPENSSL -> {
            if (!OpenSsl.isAvailable()) {
              throw new ConfigException(
                  TlsOptions.PROVIDER.key()
                      + " is openssl, but OpenSSL (netty-tcnative) does not load here: "
                      + OpenSsl.unavailabilityCause()
                      + "; use auto or jdk");
            }
            yield SslProvider.OPENSSL;
          }
          case AUTO -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        };
    return new Tls(material, provider, conf.get(TlsOptions.VERIFY_HOSTNAME));
  }

  /** Whether connections are encrypted. */
  public boolean enabled() {
    return material != null;
  }

  /** "openssl" or "jdk"; "off" without TLS. */
  public String provider() {
    return provider == null ? "off" : provider == SslProvider.JDK ? "jdk" : "openssl";
  }

  /**
   * Puts TLS first in the pipeline of an accepted connection: the handshake of a TLS client, and
   * file regions read into buffers. A connection that does not start with a TLS handshake is marked
   * {@linkplain #unencrypted unencrypted} and left as it is.
   */
  public void addServerHandlers(Channel channel) {
    if (!enabled()) {
      return;
    }
    channel
        .pipeline()
        .addFirst(
            HANDLER,
            new OptionalSslHandler(server) {
              @Override
              protected String newSslHandlerName() {
                return HANDLER;
              }

              @Override
              protected ChannelHandler newNonSslHandler(ChannelHandlerContext ctx) {
                ctx.channel().attr(UNENCRYPTED).set(Boolean.TRUE);
                return null;
              }
            });
  }

  /**
   * Puts TLS first in the pipeline of a connection to {@code host:port}; returns the handler, whose
   * {@code handshakeFuture()} says when the connection may carry requests.
   */
  public SslHandler addClientHandlers(Channel channel, String host, int port) {
    if (!enabled()) {
      throw new IllegalStateException("TLS is off");
    }
    SslHandler handler = client.newHandler(channel.alloc(), host, port);
    if (verifyHostname) {
      SSLEngine engine = handler.engine();
      SSLParameters parameters = engine.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS");
      engine.setSSLParameters(parameters);
    }
    channel.pipeline().addFirst(HANDLER, handler);
    return handler;
  }

  /** Whether {@code channel} reached a TLS port without TLS (its requests are refused). */
  public static boolean unencrypted(Channel channel) {
    return Boolean.TRUE.equals(channel.attr(UNENCRYPTED).get());
  }

  /** This process's key manager (for the Raft port), following reloads. */
  public X509ExtendedKeyManager keyManager() {
    requireEnabled();
    return material.keyManager();
  }

  /** This process's trust manager (for the Raft port), following reloads. */
  public X509ExtendedTrustManager trustManager() {
    requireEnabled();
    return material.trustManager(verifyHostname);
  }

  private void requireEnabled() {
    if (!enabled()) {
      throw new IllegalStateException("TLS is off");
    }
  }

  /** Logs what this process encrypts with, once at start. */
  public void logSummary(String process) {
    if (enabled()) {
      LOG.info(
          "{} encrypts its connections with TLS ({}; host names {})",
          process,
          provider(),
          verifyHostname ? "verified" : "not verified");
    }
  }

  @Override
  public String toString() {
    return enabled() ? "Tls(" + provider() + ", " + material + ")" : "Tls(off)";
  }
}
