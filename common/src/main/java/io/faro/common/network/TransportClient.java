package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.LogSafe;
import io.faro.common.log.RateLimitedLog;
import io.faro.common.version.Compatibility;
import io.faro.proto.ErrorResponse;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection to one remote server, shared by every caller in this process (see {@link
 * ClientPool}). Requests are matched to answers by request id; every request has a timeout; a
 * closed connection fails everything pending on it with CONNECTION_FAILED (retryable). Thread-safe.
 */
public final class TransportClient {
  private final Channel channel;
  private final HostPort remote;
  private final Duration defaultTimeout;
  private final AtomicLong nextRequestId = new AtomicLong(1);
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  // The pool's: warnings about servers are rate-limited per pool.
  private final RateLimitedLog<PeerWarning> warnings;

  private record Pending(CompletableFuture<Frame> future, ScheduledFuture<?> timeout) {}

  // Set once its pool stopped handing it out: closes when nothing is pending on it any more.
  private volatile boolean retiring;

  // What this connection proved to its server (see ClientPool); anonymous until then.
  private volatile Identity proven = Identity.ANONYMOUS;
  // The wire protocol the handshake settled; the oldest until one did (or none will: auth off).
  private volatile int protocol = Compatibility.OLDEST_PROTOCOL;

  TransportClient(
      Channel channel,
      HostPort remote,
      Duration defaultTimeout,
      RateLimitedLog<PeerWarning> warnings) {
    this.channel = requireNonNull(channel, "channel is null");
    this.remote = requireNonNull(remote, "remote is null");
    this.defaultTimeout = requireNonNull(defaultTimeout, "defaultTimeout is null");
    this.warnings = requireNonNull(warnings, "warnings is null");
  }

  public HostPort remote() {
    return remote;
  }

  /** The identity this connection proved to its server. */
  public Identity proven() {
    return proven;
  }

  /** The wire protocol this connection speaks, as its handshake settled it. */
  public int protocol() {
    return protocol;
  }

  void speaks(int version) {
    this.protocol = version;
  }

  void provenAs(Identity identity) {
    this.proven = identity;
  }

  public boolean isActive() {
    return channel.isActive();
  }

  /**
   * Sends a request and returns the answer frame, which the caller must release. Takes ownership of
   * {@code body} (or null), also on failure.
   */
  public CompletableFuture<Frame> send(Message meta, ByteBuf body, Duration timeout) {
    long id = nextRequestId.getAndIncrement();
    CompletableFuture<Frame> future = new CompletableFuture<>();
    ScheduledFuture<?> timer;
    try {
      timer =
          channel
              .eventLoop()
              .schedule(
                  () ->
                      fail(
                          id,
                          new FaroException(
                              ErrorCode.TIMEOUT,
                              MessageCodecs.typeOf(meta)
                                  + " to "
                                  + remote
                                  + " got no answer within "
                                  + timeout.toMillis()
                                  + "ms (faro.network.request.timeout)")),
                  timeout.toMillis(),
                  TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // The pool is closing: its event loops take no more work.
      ReferenceCountUtil.safeRelease(body);
      future.completeExceptionally(
          new FaroException(
              ErrorCode.CONNECTION_FAILED, "connection to " + remote + " is closing", e));
      return future;
    }
    pending.put(id, new Pending(future, timer));
    ChannelFuture write =
        channel.writeAndFlush(new OutboundFrame(FrameKind.REQUEST, id, meta, body));
    write.addListener(
        f -> {
          if (!f.isSuccess()) {
            fail(
                id,
                new FaroException(
                    ErrorCode.CONNECTION_FAILED,
                    "cannot send "
                        + MessageCodecs.typeOf(meta)
                        + " to "
                        + remote
                        + ": "
                        + f.cause(),
                    f.cause()));
          }
        });
    return future;
  }

  /** A control RPC: no body either way; the answer's meta as {@code responseType}. */
  public <R extends Message> CompletableFuture<R> call(Message request, Class<R> responseType) {
    return call(request, responseType, defaultTimeout);
  }

  public <R extends Message> CompletableFuture<R> call(
      Message request, Class<R> responseType, Duration timeout) {
    CompletableFuture<R> result = new CompletableFuture<>();
    // Not thenApply: a cancelled result must still release the answer when it comes.
    send(request, null, timeout)
        .whenComplete(
            (frame, error) -> {
              if (error != null) {
                result.completeExceptionally(error);
                return;
              }
              try {
                result.complete(frame.meta(responseType));
              } catch (RuntimeException e) {
                result.completeExceptionally(
                    new FaroException(
                        ErrorCode.INVALID_REQUEST,
                        remote
                            + " answered "
                            + frame.type()
                            + " where "
                            + responseType.getSimpleName()
                            + " was expected"));
              } finally {
                frame.release();
              }
            });
    return result;
  }

  private void fail(long id, Throwable cause) {
    Pending p = pending.remove(id);
    if (p != null) {
      p.timeout.cancel(false);
      p.future.completeExceptionally(cause);
      closeIfRetiredAndIdle();
    }
  }

  private void complete(Frame frame) {
    Pending p = pending.remove(frame.requestId());
    closeIfRetiredAndIdle();
    if (p == null) {
      // Timed out already: nobody waits for it.
      frame.release();
      return;
    }
    p.timeout.cancel(false);
    if (frame.kind() == FrameKind.ERROR) {
      ErrorResponse error =
          frame.meta() instanceof ErrorResponse e
              ? e
              : ErrorResponse.newBuilder()
                  .setCode(ErrorCode.INTERNAL.toProto())
                  .setMessage("error frame with a " + frame.type() + " body")
                  .build();
      frame.release();
      p.future.completeExceptionally(new RemoteException(remote, error));
    } else if (!p.future.complete(frame)) {
      frame.release();
    }
  }

  private void failAll(String reason) {
    for (Long id : pending.keySet()) {
      fail(
          id,
          new FaroException(ErrorCode.CONNECTION_FAILED, "connection to " + remote + " " + reason));
    }
  }

  void close() {
    channel.close();
  }

  /**
   * Closes this connection once the requests pending on it are answered (or time out), at once if
   * none is: its pool hands it out no more (it proved other credentials than the pool's now), but
   * what it carries still gets its answer instead of failing with the switch.
   */
  void retire() {
    retiring = true;
    closeIfRetiredAndIdle();
  }

  private void closeIfRetiredAndIdle() {
    if (retiring && pending.isEmpty()) {
      channel.close();
    }
  }

  /** The client side of the pipeline: routes answers to their requests. */
  final class ResponseHandler extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Frame frame = (Frame) msg;
      if (frame.kind() == FrameKind.REQUEST) {
        frame.release();
        warnings.warn(
            PeerWarning.UNEXPECTED_FRAME,
            "Closing connection to {}: the server sent a request frame",
            remote);
        ctx.close();
        return;
      }
      complete(frame);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      failAll("closed");
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      warnings.warn(
          PeerWarning.kindOf(cause),
          "Closing connection to {}: {}",
          remote,
          LogSafe.text(cause.toString()));
      failAll("failed: " + cause);
      ctx.close();
    }
  }
}
