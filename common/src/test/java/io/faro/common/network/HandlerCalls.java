package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.log.RateLimitedLog;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MessageType;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.LoggerFactory;

/**
 * Calls a {@link RequestHandler} as the transport server does once a frame is decoded: its refusal
 * first, for the connection's identity, then {@code handle} with a {@link Responder} on a real
 * connection (Netty's in-process transport, on its own event loop), whose answers a test reads back
 * as they were written. For unit tests of one handler without sockets or frame codecs; the
 * transport itself is tested over loopback.
 */
public final class HandlerCalls implements AutoCloseable {
  private static final AtomicLong NAMES = new AtomicLong();
  private static final long WAIT_SECONDS = 20;

  private final DefaultEventLoopGroup loop = new DefaultEventLoopGroup(1);
  private final BlockingQueue<OutboundFrame> answers = new LinkedBlockingQueue<>();
  private final RateLimitedLog<PeerWarning> warnings =
      new RateLimitedLog<>(LoggerFactory.getLogger(HandlerCalls.class), PeerWarning.class);
  private final Channel server;
  private final Channel client;
  private final AtomicLong requestIds = new AtomicLong();

  /** A connection whose peer proved {@code who}. */
  public HandlerCalls(Identity who) throws Exception {
    LocalAddress address = new LocalAddress("handler-calls-" + NAMES.incrementAndGet());
    CompletableFuture<Channel> accepted = new CompletableFuture<>();
    new ServerBootstrap()
        .group(loop)
        .channel(LocalServerChannel.class)
        .childHandler(
            new ChannelInitializer<LocalChannel>() {
              @Override
              protected void initChannel(LocalChannel channel) {
                accepted.complete(channel);
              }
            })
        .bind(address)
        .sync();
    client =
        new Bootstrap()
            .group(loop)
            .channel(LocalChannel.class)
            .handler(
                new ChannelInboundHandlerAdapter() {
                  @Override
                  public void channelRead(ChannelHandlerContext ctx, Object message) {
                    answers.add((OutboundFrame) message);
                  }
                })
            .connect(address)
            .sync()
            .channel();
    server = accepted.get(WAIT_SECONDS, TimeUnit.SECONDS);
    Identity.bind(server, who);
  }

  /** The server side of the connection, which handlers see as {@link Request#channel()}. */
  public Channel channel() {
    return server;
  }

  /**
   * Hands {@code handler} one request (borrowing {@code body}, which may be null), unless its
   * refusal refuses it for this connection's identity: then the refusal, and nothing was handled.
   */
  public Optional<String> send(
      RequestHandler handler, MessageType type, Message meta, ByteBuf body) {
    Optional<String> refusal = handler.refusal(type, meta, Identity.of(server));
    if (refusal.isPresent()) {
      return refusal;
    }
    long id = requestIds.incrementAndGet();
    Responder responder = new Responder(server, id, warnings);
    // As the server does: a handler's exception is its answer.
    try {
      handler.handle(new Request(server, type, id, meta, body), responder);
    } catch (FaroException e) {
      responder.fail(e.code(), e.getMessage());
    } catch (RuntimeException e) {
      responder.fail(ErrorCode.INTERNAL, type + " failed: " + e);
    }
    return Optional.empty();
  }

  /** The next answer written, waiting for it (a handler may answer from another thread). */
  public OutboundFrame answer() throws InterruptedException {
    OutboundFrame answer = answers.poll(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(answer).as("an answer within %d s", WAIT_SECONDS).isNotNull();
    return answer;
  }

  /** The next answer, which must be an error: its code and message. */
  public ErrorResponse error() throws InterruptedException {
    OutboundFrame answer = answer();
    try {
      assertThat(answer.kind()).as("answered %s", answer.meta()).isEqualTo(FrameKind.ERROR);
      return (ErrorResponse) answer.meta();
    } finally {
      answer.release();
    }
  }

  /** The next answer, which must be a response of {@code type}. */
  public <M extends Message> M response(Class<M> type) throws InterruptedException {
    OutboundFrame answer = answer();
    try {
      assertThat(answer.kind()).as("answered %s", answer.meta()).isEqualTo(FrameKind.RESPONSE);
      return type.cast(answer.meta());
    } finally {
      answer.release();
    }
  }

  @Override
  public void close() throws InterruptedException {
    client.close().sync();
    server.close().sync();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    answers.forEach(OutboundFrame::release);
  }
}
