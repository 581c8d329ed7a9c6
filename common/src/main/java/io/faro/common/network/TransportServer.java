package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import io.faro.common.log.RateLimitedLog;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
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
 * <p>This class binds and closes; what each connection gets is set up by {@link ServerPipeline},
 * bounded per peer address by {@link PeerLimits}, and served by {@link ServerHandler}.
 */
public final class TransportServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);

  private final String name;
  private final EventLoopGroup bossGroup;
  private final EventLoopGroup ioGroup;
  private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final Channel serverChannel;
  private final RateLimitedLog<PeerWarning> warnings = new RateLimitedLog<>(LOG, PeerWarning.class);

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
      NetworkSettings settings,
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
      NetworkSettings settings,
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
      NetworkSettings settings,
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
            .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, AnswerSizeEstimator.INSTANCE)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childHandler(
                new ServerPipeline(
                    name,
                    settings,
                    handler,
                    customizer,
                    maxFrame,
                    bodies,
                    partialFrames,
                    observer,
                    channels,
                    new PeerLimits(name, warnings),
                    warnings));
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
}
