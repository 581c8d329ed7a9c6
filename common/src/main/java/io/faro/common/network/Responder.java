package io.faro.common.network;

import com.google.protobuf.Message;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.RateLimitedLog;
import io.faro.proto.ErrorResponse;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.FileRegion;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.atomic.AtomicBoolean;

/** Answers one request exactly once; may be called from any thread. Later answers are dropped. */
public final class Responder {
  private final Channel channel;
  private final long requestId;
  // The server's: warnings about requests are rate-limited per server.
  private final RateLimitedLog<PeerWarning> warnings;
  private final AtomicBoolean answered = new AtomicBoolean();
  // Told once when the request is answered (or dropped), and whether with an error: the server
  // counts requests in progress and tells its observer.
  private final Answered onAnswered;

  /** Told once when the request is answered. */
  interface Answered {
    void answered(boolean failed);
  }

  // Answers a peer may leave unread on this connection before it is closed.
  private final long maxPendingAnswerBytes;

  Responder(Channel channel, long requestId, RateLimitedLog<PeerWarning> warnings) {
    this(channel, requestId, warnings, failed -> {}, Long.MAX_VALUE);
  }

  Responder(
      Channel channel,
      long requestId,
      RateLimitedLog<PeerWarning> warnings,
      Answered onAnswered,
      long maxPendingAnswerBytes) {
    this.channel = channel;
    this.requestId = requestId;
    this.warnings = warnings;
    this.onAnswered = onAnswered;
    this.maxPendingAnswerBytes = maxPendingAnswerBytes;
  }

  /**
   * Writes an answer, unless the peer left more than faro.network.max.pending.answer.bytes of
   * earlier ones unread (it pipelines requests and never reads): then the connection closes, so
   * that answers cannot pile up in this process's memory. Takes ownership of {@code frame}'s body.
   */
  private void write(OutboundFrame frame) {
    ChannelOutboundBuffer pending = channel.unsafe().outboundBuffer();
    if (pending != null && pending.totalPendingWriteBytes() > maxPendingAnswerBytes) {
      onAnswered.answered(true);
      ReferenceCountUtil.safeRelease(frame.body());
      warnings.warn(
          PeerWarning.CONNECTION_LIMITED,
          "Closing the connection from {}: it left {} bytes of answers "
              + "unread, more than faro.network.max.pending.answer.bytes ({})",
          channel.remoteAddress(),
          pending.totalPendingWriteBytes(),
          maxPendingAnswerBytes);
      channel.close();
      return;
    }
    // An answer to a connection the peer already closed never arrives: a failure too.
    onAnswered.answered(frame.kind() == FrameKind.ERROR || !channel.isActive());
    channel.writeAndFlush(frame);
  }

  /** Whether the connection the answer would go to is still open. */
  public boolean connected() {
    return channel.isActive();
  }

  public void respond(Message meta) {
    respond(meta, null);
  }

  /** Takes ownership of {@code body} (or null). */
  public void respond(Message meta, ByteBuf body) {
    if (!answered.compareAndSet(false, true)) {
      ReferenceCountUtil.safeRelease(body);
      return;
    }
    write(new OutboundFrame(FrameKind.RESPONSE, requestId, meta, body));
  }

  /**
   * Answers with {@code body} sent from its file (sendfile, no copy through this process); only
   * where {@link #takesFileRegions()}. Takes ownership of {@code body}.
   */
  public void respondFromFile(Message meta, FileRegion body) {
    if (!answered.compareAndSet(false, true)) {
      ReferenceCountUtil.safeRelease(body);
      return;
    }
    if (!takesFileRegions()) {
      ReferenceCountUtil.safeRelease(body);
      throw new IllegalStateException("a file region answer on a connection with TLS");
    }
    write(OutboundFrame.fromFile(FrameKind.RESPONSE, requestId, meta, body));
  }

  /**
   * Whether an answer's body may be a file region: on a connection without TLS (TLS encrypts in
   * this process, so the bytes must pass through it).
   */
  public boolean takesFileRegions() {
    return channel.pipeline().get(SslHandler.class) == null;
  }

  public void fail(ErrorCode code, String message) {
    if (!answered.compareAndSet(false, true)) {
      return;
    }
    ErrorResponse error =
        ErrorResponse.newBuilder()
            .setCode(code.toProto())
            .setMessage(message)
            .setRetryable(code.retryable())
            .build();
    write(new OutboundFrame(FrameKind.ERROR, requestId, error, null));
  }

  public void fail(ErrorResponse error) {
    if (answered.compareAndSet(false, true)) {
      write(new OutboundFrame(FrameKind.ERROR, requestId, error, null));
    }
  }

  /**
   * Closes the connection instead of answering (this and every other request pending on it fail on
   * the client's side). For fault injection in tests of real processes.
   */
  public void dropConnection(String reason) {
    if (!answered.getAndSet(true)) {
      onAnswered.answered(true);
    }
    warnings.warn(
        PeerWarning.CONNECTION_DROPPED,
        "Closing the connection from {} on request #{}: {}",
        channel.remoteAddress(),
        requestId,
        reason);
    channel.close();
  }

  /** Answers with the code of a {@link FaroException}, or INTERNAL for anything else. */
  public void fail(Throwable t) {
    Throwable cause = Futures.unwrap(t);
    if (cause instanceof FaroException fe) {
      fail(fe.code(), fe.getMessage());
    } else {
      warnings.warn(
          PeerWarning.REQUEST_FAILED,
          "Request #{} from {} failed",
          requestId,
          channel.remoteAddress(),
          cause);
      fail(ErrorCode.INTERNAL, String.valueOf(cause));
    }
  }
}
