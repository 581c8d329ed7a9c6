package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.LogSafe;
import io.faro.common.log.RateLimitedLog;
import io.faro.common.tls.Tls;
import io.faro.proto.MessageType;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A framed-protocol server on one port. Owns its event loops (named {@code <name>-io-N}) and every
 * accepted connection; {@link #close()} stops accepting, closes connections and waits for the loops
 * to end.
 *
 * <p>What peers do wrong (garbage frames, resets, requests that fail) is logged at WARN, each kind
 * at most {@value RateLimitedLog#DEFAULT_LINES} lines per 10 s per server; the rest are counted
 * ({@link #suppressedWarnings()}) and summed up in the next line of that kind.
 *
 * <p>Over 500 lines: the pipeline and the per-peer bounds (connections, half-received bytes) that
 * guard it share this class's state; the request dispatch inside it is the next part to move out.
 */
public final class TransportServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);

  private final String name;
  private final EventLoopGroup bossGroup;
  private final EventLoopGroup ioGroup;
  private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final Channel serverChannel;
  private final RateLimitedLog<PeerWarning> warnings = new RateLimitedLog<>(LOG, PeerWarning.class);
  private final ConcurrentHashMap<InetAddress, AtomicInteger> connectionsPerPeer =
      new ConcurrentHashMap<>();
  // On a port without a memory budget: bytes of frames still arriving, per peer address.
  private final ConcurrentHashMap<InetAddress, Long> partialBytesPerPeer =
      new ConcurrentHashMap<>();

  /**
   * Binds {@code host:port} (0 for an ephemeral port) and starts serving {@code handler}.
   *
   * @param portKey the config key that sets {@code port}, named when the port cannot be bound
   * @param customizer adds handlers after the codec (e.g. back-pressure), may be null
   * @throws IllegalStateException when it cannot listen; the message names the port, why, and
   *     {@code portKey}
   */
  public TransportServer(
      String name,
      String host,
      int port,
      String portKey,
      NetworkOptions.Settings settings,
      RequestHandler handler,
      Consumer<SocketChannel> customizer) {
    this(name, host, port, portKey, settings, handler, customizer, FrameDecoder.Bodies.CONTIGUOUS);
  }

  /**
   * @param bodies how request bodies spanning several received buffers are built: {@code COMPOSITE}
   *     for bodies that go to disk as they are (no copy), else {@code CONTIGUOUS}
   */
  public TransportServer(
      String name,
      String host,
      int port,
      String portKey,
      NetworkOptions.Settings settings,
      RequestHandler handler,
      Consumer<SocketChannel> customizer,
      FrameDecoder.Bodies bodies) {
    this(
        name,
        host,
        port,
        portKey,
        settings,
        handler,
        customizer,
        bodies,
        null,
        RequestObserver.NONE);
  }

  /**
   * A server whose frames may be large ({@code bodies} COMPOSITE: a data port, frames up to
   * faro.network.max.frame.size) or not (up to faro.network.max.request.size).
   *
   * @param partialFrames counts the bytes of frames still arriving, or null: a push port charges
   *     them to its memory budget, so that half-sent frames pause reading like any other data
   * @param observer told of every request and its answer (metrics)
   */
  public TransportServer(
      String name,
      String host,
      int port,
      String portKey,
      NetworkOptions.Settings settings,
      RequestHandler handler,
      Consumer<SocketChannel> customizer,
      FrameDecoder.Bodies bodies,
      FrameDecoder.PartialFrames partialFrames,
      RequestObserver observer) {
    this.name = requireNonNull(name, "name is null");
    requireNonNull(observer, "observer is null");
    int maxFrame =
        bodies == FrameDecoder.Bodies.COMPOSITE
            ? settings.maxFrameSize()
            : settings.maxRequestSize();
    requireNonNull(portKey, "portKey is null");
    requireNonNull(handler, "handler is null");
    this.bossGroup = new NioEventLoopGroup(1, new DefaultThreadFactory(name + "-accept", true));
    this.ioGroup =
        new NioEventLoopGroup(settings.ioThreads(), NetworkThreads.factory(name + "-io"));
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(bossGroup, ioGroup)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    if (!admit(ch, settings.maxConnectionsPerPeer())) {
                      return;
                    }
                    channels.add(ch);
                    settings.tls().addServerHandlers(ch);
                    ch.pipeline()
                        .addLast(
                            "idle",
                            new IdleStateHandler(
                                settings.requestTimeout().toMillis(),
                                0,
                                settings.idleTimeout().toMillis(),
                                TimeUnit.MILLISECONDS))
                        .addLast("frameEncoder", FrameEncoder.INSTANCE)
                        .addLast(
                            "frameDecoder",
                            new FrameDecoder(
                                maxFrame,
                                bodies,
                                partialFrames != null
                                    ? partialFrames
                                    : peerBytes(ch, settings.limits().partialBytesPerPeer()),
                                new ServerFrameLimits(name, ch, settings, handler.openToAnyone())));
                    if (customizer != null) {
                      customizer.accept(ch);
                    }
                    ch.pipeline()
                        .addLast(
                            "requests",
                            new ServerHandler(
                                name,
                                handler,
                                warnings,
                                settings.maxPendingAnswerBytes(),
                                observer,
                                new ServerAuth(name, settings.auth(), warnings),
                                settings.auth().enabled()
                                    ? settings.limits().handshakeTimeout()
                                    : null));
                  }
                });
    // Not syncUninterruptibly(): it rethrows the checked BindException undeclared, past a catch of
    // RuntimeException, and callers then blamed whatever else their try block did.
    ChannelFuture bind = bootstrap.bind(host, port).awaitUninterruptibly();
    if (!bind.isSuccess()) {
      bossGroup.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      ioGroup.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      Throwable cause = bind.cause();
      throw new IllegalStateException(
          BindFailures.find(cause)
              .map(b -> BindFailures.message(name, host, port, portKey, b))
              .orElse(
                  name + " cannot listen on " + host + ":" + port + " (" + portKey + "): " + cause),
          cause);
    }
    this.serverChannel = bind.channel();
    LOG.info("{} listening on {}", name, serverChannel.localAddress());
  }

  /**
   * Counts {@code ch} against its peer address, or closes it when that peer already has {@code max}
   * connections here (a client that opens connections in a loop must not exhaust the process's file
   * descriptors and buffers).
   */
  private boolean admit(SocketChannel ch, int max) {
    InetAddress peer = ch.remoteAddress() == null ? null : ch.remoteAddress().getAddress();
    if (peer == null) {
      return true;
    }
    AtomicInteger count = connectionsPerPeer.computeIfAbsent(peer, p -> new AtomicInteger());
    if (count.incrementAndGet() > max) {
      count.decrementAndGet();
      warnings.warn(
          PeerWarning.CONNECTION_LIMITED,
          "{}: refusing a connection from {}: it has {} already "
              + "(faro.network.max.connections.per.peer)",
          name,
          peer,
          max);
      ch.close();
      return false;
    }
    ch.closeFuture()
        .addListener(
            f -> {
              if (count.decrementAndGet() == 0) {
                connectionsPerPeer.remove(peer, count);
              }
            });
    return true;
  }

  /**
   * Counts the bytes of frames still arriving on {@code ch} against its peer address's share of
   * {@code max} (faro.network.max.partial.bytes.per.peer), on a port without a memory budget: the
   * connection whose bytes take its peer over it is closed, with the reason.
   */
  private FrameDecoder.PartialFrames peerBytes(SocketChannel ch, long max) {
    InetAddress peer = ch.remoteAddress() == null ? null : ch.remoteAddress().getAddress();
    if (peer == null) {
      return null;
    }
    return delta -> {
      // Atomic per peer, and an entry only while some of its bytes are held.
      Long held =
          partialBytesPerPeer.compute(
              peer,
              (p, before) -> {
                long after = (before == null ? 0 : before) + delta;
                return after <= 0 ? null : after;
              });
      long now = held == null ? 0 : held;
      if (delta > 0 && now > max) {
        throw new TooLongFrameException(
            "the connections from "
                + peer.getHostAddress()
                + " hold "
                + now
                + " bytes of frames still arriving, more than "
                + max
                + " (faro.network.max.partial.bytes.per.peer)");
      }
    };
  }

  public int port() {
    return ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  public String name() {
    return name;
  }

  /** Connections open now. */
  public int connections() {
    return channels.size();
  }

  /** Warnings about peers this server did not log because too many of their kind came at once. */
  public long suppressedWarnings() {
    return warnings.suppressed();
  }

  @Override
  public void close() {
    serverChannel.close().syncUninterruptibly();
    channels.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    ioGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    LOG.info("{} stopped", name);
  }

  /** Dispatches request frames; closes the connection, with a logged reason, on bad input. */
  /**
   * Requests one connection may have in progress: far above what a client sends (a task keeps
   * faro.client.push.max.in.flight pushes and a reader a few fetches ahead, an executor's tasks
   * share a connection).
   */
  static final int MAX_IN_PROGRESS = 4096;

  private static final class ServerHandler extends ChannelInboundHandlerAdapter {
    private final String serverName;
    private final RequestHandler handler;
    private final RateLimitedLog<PeerWarning> warnings;
    private final long maxPendingAnswerBytes;
    private final RequestObserver observer;
    private final ServerAuth auth;
    // With faro.auth.enabled: how long a connection has to prove itself; null without.
    private final Duration handshakeTimeout;
    // Requests of this connection not answered yet; answers may come from any thread.
    private final AtomicInteger inProgress = new AtomicInteger();
    // Whether a whole frame came yet; on the event loop.
    private boolean sawFrame;

    ServerHandler(
        String serverName,
        RequestHandler handler,
        RateLimitedLog<PeerWarning> warnings,
        long maxPendingAnswerBytes,
        RequestObserver observer,
        ServerAuth auth,
        Duration handshakeTimeout) {
      this.serverName = serverName;
      this.handler = handler;
      this.warnings = warnings;
      this.maxPendingAnswerBytes = maxPendingAnswerBytes;
      this.observer = observer;
      this.auth = auth;
      this.handshakeTimeout = handshakeTimeout;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      if (handshakeTimeout != null) {
        ctx.executor()
            .schedule(
                () -> closeIfUnproven(ctx), handshakeTimeout.toMillis(), TimeUnit.MILLISECONDS);
      }
      super.channelActive(ctx);
    }

    /**
     * Closes a connection that has not proved itself by faro.network.handshake.timeout and sent no
     * whole frame, holds part of one, or is inside a handshake: a stranger may not keep a
     * connection open by saying nothing, or half of something. One that proved nothing but asked
     * only what anyone may ask (an app's registration, status) stays open.
     */
    private void closeIfUnproven(ChannelHandlerContext ctx) {
      if (!ctx.channel().isActive() || !Identity.of(ctx.channel()).equals(Identity.ANONYMOUS)) {
        return;
      }
      FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
      String why =
          !sawFrame
              ? "it sent no whole request"
              : decoder != null && decoder.holdsPartialFrame()
                  ? "it holds part of a frame"
                  : auth.inHandshake() ? "its handshake did not finish" : null;
      if (why == null) {
        return;
      }
      warnings.warn(
          PeerWarning.AUTH_FAILED,
          "{}: closing the connection from {}: {} within faro.network.handshake.timeout ({} ms) "
              + "and proved nothing",
          serverName,
          ctx.channel().remoteAddress(),
          why,
          handshakeTimeout.toMillis());
      ctx.close();
    }

    /**
     * Closes a connection idle for faro.network.idle.timeout unless a request of it is in progress,
     * and one that sent part of a frame and then nothing for faro.network.request.timeout (a
     * half-sent frame pins its bytes, on a push port against the memory budget).
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
      if (event instanceof IdleStateEvent idle) {
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        boolean stalledFrame =
            idle.state() == IdleState.READER_IDLE && decoder != null && decoder.holdsPartialFrame();
        boolean idleConnection = idle.state() == IdleState.ALL_IDLE && inProgress.get() == 0;
        if (stalledFrame || idleConnection) {
          warnings.warn(
              PeerWarning.CONNECTION_LIMITED,
              "{}: closing the connection from {}: {}",
              serverName,
              ctx.channel().remoteAddress(),
              stalledFrame
                  ? "it sent part of a frame and then nothing for " + "faro.network.request.timeout"
                  : "idle for faro.network.idle.timeout");
          ctx.close();
          return;
        }
      }
      super.userEventTriggered(ctx, event);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      sawFrame = true;
      if (msg instanceof FrameDecoder.RefusedFrame refused) {
        auth.refuse(
            ctx.channel(),
            refused.requestId(),
            refused.refusal().code(),
            refused.refusal().message());
        return;
      }
      Frame frame = (Frame) msg;
      try {
        if (frame.kind() != FrameKind.REQUEST) {
          warnings.warn(
              PeerWarning.UNEXPECTED_FRAME,
              "{}: closing connection from {}: unexpected {} frame",
              serverName,
              ctx.channel().remoteAddress(),
              frame.kind());
          ctx.close();
          return;
        }
        if (Tls.unencrypted(ctx.channel())) {
          auth.refuseUnencrypted(ctx.channel(), frame.requestId());
          return;
        }
        if (ServerAuth.isHandshake(frame.type())) {
          auth.handshake(ctx.channel(), frame);
          return;
        }
        if (!auth.admits(ctx.channel(), handler, frame.type(), frame.meta(), frame.requestId())) {
          return;
        }
        if (inProgress.incrementAndGet() > MAX_IN_PROGRESS) {
          // Answers hold memory, files and read buffers until written: a peer that pipelines
          // requests without end must not make them pile up.
          inProgress.decrementAndGet();
          warnings.warn(
              PeerWarning.CONNECTION_LIMITED,
              "{}: closing the connection from {}: more than {} " + "requests in progress",
              serverName,
              ctx.channel().remoteAddress(),
              MAX_IN_PROGRESS);
          ctx.close();
          return;
        }
        MessageType type = frame.type();
        long arrival = observer.arrived(type);
        Responder responder =
            new Responder(
                ctx.channel(),
                frame.requestId(),
                warnings,
                failed -> {
                  inProgress.decrementAndGet();
                  observer.answered(type, arrival, failed);
                },
                maxPendingAnswerBytes);
        try {
          handler.handle(
              new Request(
                  ctx.channel(), frame.type(), frame.requestId(), frame.meta(), frame.body()),
              responder);
        } catch (FaroException e) {
          // A refusal with a code (bad request, unknown shuffle...): the caller learns the code.
          responder.fail(e.code(), e.getMessage());
        } catch (RuntimeException e) {
          warnings.warn(
              PeerWarning.REQUEST_FAILED,
              "{}: {} from {} failed",
              serverName,
              frame.type(),
              ctx.channel().remoteAddress(),
              e);
          responder.fail(ErrorCode.INTERNAL, frame.type() + " failed: " + e);
        }
      } finally {
        frame.release();
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      handler.connectionClosed(ctx.channel());
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      Throwable reason =
          cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
      warnings.warn(
          kindOf(cause),
          "{}: closing connection from {}: {}",
          serverName,
          ctx.channel().remoteAddress(),
          LogSafe.text(reason.toString()));
      ctx.close();
    }
  }

  /** Decoder failures (CorruptedFrameException, TooLongFrameException) are bad frames. */
  static PeerWarning kindOf(Throwable cause) {
    if (cause instanceof DecoderException) {
      return PeerWarning.BAD_FRAME;
    }
    return PeerWarning.CONNECTION_ERROR;
  }
}
