package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Handshake;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.RateLimitedLog;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * One connection per remote address for the whole process, shared by every shuffle and every
 * caller, on a fixed, named set of event-loop threads ({@code <name>-io-N}). A connection that
 * closed is replaced on the next request. Thread-safe; owned by the process's composition root.
 * Warnings about what servers do wrong are rate-limited per pool, as a server's are. A new
 * connection proves the pool's credentials through {@link ClientAuthentication}; a failed TLS
 * handshake is named by {@link TlsHandshakeFailures}.
 */
public final class ClientPool implements AutoCloseable {
  private final EventLoopGroup group;
  private final Bootstrap bootstrap;
  private final NetworkSettings settings;
  private final Map<HostPort, CompletableFuture<TransportClient>> clients =
      new ConcurrentHashMap<>();
  private final RateLimitedLog<PeerWarning> warnings =
      new RateLimitedLog<>(LoggerFactory.getLogger(TransportClient.class), PeerWarning.class);

  private final Function<HostPort, String> targets;
  // What new connections prove; a driver learns its app's secret after its pool is made.
  private volatile AuthOptions.Credentials credentials;
  // What new connections to these addresses prove instead (a driver's own lifecycle port).
  private final Map<HostPort, AuthOptions.Credentials> pinned = new ConcurrentHashMap<>();

  /** A pool whose connections prove nothing (stay anonymous). */
  public ClientPool(String name, NetworkSettings settings) {
    this(name, settings, AuthOptions.Credentials.NONE);
  }

  /**
   * A pool whose every connection proves {@code credentials} before it carries a request: a
   * connection whose handshake fails fails its requests with UNAUTHENTICATED, naming why.
   */
  public ClientPool(String name, NetworkSettings settings, AuthOptions.Credentials credentials) {
    this(name, settings, credentials, address -> "");
  }

  /**
   * @param targets how this pool names the server at an address in its handshakes ({@link
   *     Handshake#MASTER}, {@link Handshake#worker}); a member's proof is accepted only by the
   *     server it names
   */
  public ClientPool(
      String name,
      NetworkSettings settings,
      AuthOptions.Credentials credentials,
      Function<HostPort, String> targets) {
    this.targets = requireNonNull(targets, "targets is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.credentials = requireNonNull(credentials, "credentials is null");
    this.group = new NioEventLoopGroup(settings.ioThreads(), NetworkThreads.factory(name + "-io"));
    this.bootstrap =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_KEEPALIVE, true)
            .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
            .option(
                ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) settings.connectTimeout().toMillis());
  }

  public NetworkSettings settings() {
    return settings;
  }

  /** Warnings about servers this pool did not log because too many of their kind came at once. */
  public long suppressedWarnings() {
    return warnings.suppressed();
  }

  /**
   * From now on, connections prove {@code next}: open ones that proved something else are handed
   * out no more, replaced on their next request, and closed once what is pending on them was
   * answered (a request already sent is not failed by the switch). A driver calls it once it
   * registered its app, an executor when it first sees the app's secret.
   */
  public void authenticateAs(AuthOptions.Credentials next) {
    this.credentials = requireNonNull(next, "next is null");
    clients.forEach(
        (address, f) ->
            f.thenAccept(
                c -> {
                  if (!c.proven().equals(credentials(address).identity())) {
                    c.retire();
                  }
                }));
  }

  /**
   * From now on, connections to {@code address} prove {@code next}, whatever the pool's credentials
   * for other addresses: an application's executors prove its identity to its driver's lifecycle
   * port even where the cluster does not authenticate. An open connection to it that proved
   * something else is retired, as by {@link #authenticateAs(AuthOptions.Credentials)}.
   */
  public void authenticateAs(HostPort address, AuthOptions.Credentials next) {
    requireNonNull(next, "next is null");
    pinned.put(requireNonNull(address, "address is null"), next);
    CompletableFuture<TransportClient> open = clients.get(address);
    if (open != null) {
      open.thenAccept(
          c -> {
            if (!c.proven().equals(next.identity())) {
              c.retire();
            }
          });
    }
  }

  /** What this pool's new connections prove. */
  public AuthOptions.Credentials credentials() {
    return credentials;
  }

  /** What this pool's new connections to {@code address} prove. */
  public AuthOptions.Credentials credentials(HostPort address) {
    AuthOptions.Credentials own = pinned.get(address);
    return own != null ? own : credentials;
  }

  /**
   * The shared connection to {@code address}, connecting if there is none, it closed, or it proved
   * other credentials than the pool's now.
   */
  public CompletableFuture<TransportClient> client(HostPort address) {
    return clients.compute(
        address,
        (a, existing) -> {
          if (existing != null && !existing.isDone()) {
            return existing;
          }
          if (existing != null && !existing.isCompletedExceptionally()) {
            TransportClient open = existing.join();
            if (open.isActive() && open.proven().equals(credentials(a).identity())) {
              return existing;
            }
            open.retire();
          }
          return connect(a);
        });
  }

  private CompletableFuture<TransportClient> connect(HostPort address) {
    CompletableFuture<TransportClient> result = new CompletableFuture<>();
    Bootstrap b = bootstrap.clone();
    b.handler(
        new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            // The client object needs the channel, and the pipeline needs the client's handler.
            TransportClient client =
                new TransportClient(ch, address, settings.requestTimeout(), warnings);
            ch.attr(CLIENT).set(client);
            if (settings.tls().enabled()) {
              ch.attr(TLS)
                  .set(settings.tls().addClientHandlers(ch, address.host(), address.port()));
            }
            ch.pipeline()
                .addLast("frameEncoder", FrameEncoder.INSTANCE)
                .addLast("frameDecoder", new FrameDecoder(settings.maxFrameSize()))
                .addLast("responses", client.new ResponseHandler());
          }
        });
    ChannelFuture connect = b.connect(address.host(), address.port());
    connect.addListener(
        f -> {
          if (f.isSuccess()) {
            TransportClient client = connect.channel().attr(CLIENT).get();
            SslHandler tls = connect.channel().attr(TLS).get();
            if (tls == null) {
              authenticate(client, result);
              return;
            }
            tls.handshakeFuture()
                .addListener(
                    h -> {
                      if (h.isSuccess()) {
                        authenticate(client, result);
                      } else {
                        client.close();
                        result.completeExceptionally(
                            TlsHandshakeFailures.failure(address, h.cause()));
                      }
                    });
          } else {
            result.completeExceptionally(
                new FaroException(
                    ErrorCode.CONNECTION_FAILED,
                    "cannot connect to " + address + ": " + f.cause(),
                    f.cause()));
          }
        });
    return result;
  }

  /** Completes {@code result} with {@code client} once it proved this pool's credentials. */
  private void authenticate(TransportClient client, CompletableFuture<TransportClient> result) {
    ClientAuthentication.authenticate(client, credentials(client.remote()), targets, result);
  }

  private static final AttributeKey<TransportClient> CLIENT = AttributeKey.valueOf("faro.client");
  private static final AttributeKey<SslHandler> TLS = AttributeKey.valueOf("faro.client.tls");

  /**
   * Sends on the shared connection; takes ownership of {@code body}, also when connecting fails.
   * The answer frame belongs to the caller; if the caller's future was cancelled or timed out
   * meanwhile, the frame is released here.
   */
  public CompletableFuture<Frame> send(
      HostPort address, Message meta, ByteBuf body, Duration timeout) {
    CompletableFuture<Frame> result = new CompletableFuture<>();
    client(address)
        .whenComplete(
            (client, error) -> {
              if (error != null) {
                ReferenceCountUtil.safeRelease(body);
                result.completeExceptionally(Futures.unwrap(error));
                return;
              }
              client
                  .send(meta, body, timeout)
                  .whenComplete(
                      (frame, sendError) -> {
                        if (sendError != null) {
                          result.completeExceptionally(Futures.unwrap(sendError));
                        } else if (!result.complete(frame)) {
                          frame.release();
                        }
                      });
            });
    return result;
  }

  public <R extends Message> CompletableFuture<R> call(
      HostPort address, Message request, Class<R> responseType) {
    return call(address, request, responseType, settings.requestTimeout());
  }

  public <R extends Message> CompletableFuture<R> call(
      HostPort address, Message request, Class<R> responseType, Duration timeout) {
    return client(address).thenCompose(c -> c.call(request, responseType, timeout));
  }

  @Override
  public void close() {
    clients.values().forEach(f -> f.thenAccept(TransportClient::close));
    clients.clear();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
