package io.faro.common.network;

import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.LogSafe;
import io.faro.common.log.RateLimitedLog;
import io.faro.common.tls.Tls;
import io.faro.proto.MessageType;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The last handler of a server connection's pipeline: hands each decoded request to the server's
 * {@link RequestHandler} with a {@link Responder}, after the checks that come first (frame kind,
 * TLS, the handshake and what the connection's identity may send, requests in progress). It also
 * closes, with a rate-limited warning, a connection that stays unproven past the handshake timeout,
 * one idle or stalled in the middle of a frame, and one whose peer sent something it cannot read.
 * One instance per connection.
 */
final class ServerHandler extends ChannelInboundHandlerAdapter {
  /**
   * Requests one connection may have in progress: far above what a client sends (a task keeps
   * faro.client.push.max.in.flight pushes and a reader a few fetches ahead, an executor's tasks
   * share a connection).
   */
  static final int MAX_IN_PROGRESS = 4096;

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
          .schedule(() -> closeIfUnproven(ctx), handshakeTimeout.toMillis(), TimeUnit.MILLISECONDS);
    }
    super.channelActive(ctx);
  }

  /**
   * Closes a connection that has not proved itself by faro.network.handshake.timeout and sent no
   * whole frame, holds part of one, or is inside a handshake: a stranger may not keep a connection
   * open by saying nothing, or half of something. One that proved nothing but asked only what
   * anyone may ask (an app's registration, status) stays open.
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
      if (!answeredHere(ctx, frame) && takeInProgress(ctx)) {
        dispatch(ctx, frame);
      }
    } finally {
      frame.release();
    }
  }

  /**
   * Deals here with a frame that is not for the handler: closes the connection on a frame that is
   * not a request, refuses a request that came without TLS where TLS is required, answers a
   * handshake frame, and refuses what the connection's identity may not send. True when it dealt
   * with {@code frame}.
   */
  private boolean answeredHere(ChannelHandlerContext ctx, Frame frame) {
    if (frame.kind() != FrameKind.REQUEST) {
      warnings.warn(
          PeerWarning.UNEXPECTED_FRAME,
          "{}: closing connection from {}: unexpected {} frame",
          serverName,
          ctx.channel().remoteAddress(),
          frame.kind());
      ctx.close();
      return true;
    }
    if (Tls.unencrypted(ctx.channel())) {
      auth.refuseUnencrypted(ctx.channel(), frame.requestId());
      return true;
    }
    if (ServerAuth.isHandshake(frame.type())) {
      auth.handshake(ctx.channel(), frame, handler.oldestProtocol());
      return true;
    }
    return !auth.admits(ctx.channel(), handler, frame.type(), frame.meta(), frame.requestId());
  }

  /**
   * Counts one more request in progress, or closes the connection when it has {@link
   * #MAX_IN_PROGRESS} already. True when counted; the request's answer uncounts it.
   */
  private boolean takeInProgress(ChannelHandlerContext ctx) {
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
      return false;
    }
    return true;
  }

  /**
   * Hands {@code frame} to the handler with a responder that tells the observer of its answer; a
   * handler that throws is answered with an error instead.
   */
  private void dispatch(ChannelHandlerContext ctx, Frame frame) {
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
          new Request(ctx.channel(), frame.type(), frame.requestId(), frame.meta(), frame.body()),
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
        PeerWarning.kindOf(cause),
        "{}: closing connection from {}: {}",
        serverName,
        ctx.channel().remoteAddress(),
        LogSafe.text(reason.toString()));
    ctx.close();
  }
}
