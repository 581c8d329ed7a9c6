package io.faro.common.network;

import io.faro.common.log.RateLimitedLog;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Sets up each connection a {@link TransportServer} accepts: admits it against its peer's
 * connection limit, then builds its pipeline in order: TLS (when configured), idle and stall
 * timeouts, the frame encoder, the frame decoder with its size and per-peer limits, whatever the
 * server's owner adds, and last the {@link ServerHandler} that dispatches requests. One instance
 * serves every connection of its server.
 */
final class ServerPipeline extends ChannelInitializer<SocketChannel> {
  private final String serverName;
  private final NetworkSettings settings;
  private final RequestHandler handler;
  private final Consumer<SocketChannel> customizer;
  private final int maxFrame;
  private final FrameDecoder.Bodies bodies;
  private final FrameDecoder.PartialFrames partialFrames;
  private final RequestObserver observer;
  private final ChannelGroup channels;
  private final PeerLimits peers;
  private final RateLimitedLog<PeerWarning> warnings;

  /**
   * @param customizer adds handlers after the codec, may be null
   * @param maxFrame the largest frame the decoder takes
   * @param partialFrames counts the bytes of frames still arriving, or null to bound them per peer
   *     with {@code peers}
   * @param channels where each admitted connection is added, for the server to close them
   */
  ServerPipeline(
      String serverName,
      NetworkSettings settings,
      RequestHandler handler,
      Consumer<SocketChannel> customizer,
      int maxFrame,
      FrameDecoder.Bodies bodies,
      FrameDecoder.PartialFrames partialFrames,
      RequestObserver observer,
      ChannelGroup channels,
      PeerLimits peers,
      RateLimitedLog<PeerWarning> warnings) {
    this.serverName = serverName;
    this.settings = settings;
    this.handler = handler;
    this.customizer = customizer;
    this.maxFrame = maxFrame;
    this.bodies = bodies;
    this.partialFrames = partialFrames;
    this.observer = observer;
    this.channels = channels;
    this.peers = peers;
    this.warnings = warnings;
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    if (!peers.admit(ch, settings.maxConnectionsPerPeer())) {
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
        .addLast("frameDecoder", decoder(ch));
    if (customizer != null) {
      customizer.accept(ch);
    }
    ch.pipeline().addLast("requests", requests());
  }

  private FrameDecoder decoder(SocketChannel ch) {
    return new FrameDecoder(
        maxFrame,
        bodies,
        partialFrames != null
            ? partialFrames
            : peers.peerBytes(ch, settings.limits().partialBytesPerPeer()),
        new ServerFrameLimits(serverName, ch, settings, handler.openToAnyone()));
  }

  private ServerHandler requests() {
    return new ServerHandler(
        serverName,
        handler,
        warnings,
        settings.maxPendingAnswerBytes(),
        observer,
        new ServerAuth(serverName, settings.auth(), warnings),
        settings.auth().enabled() ? settings.limits().handshakeTimeout() : null);
  }
}
