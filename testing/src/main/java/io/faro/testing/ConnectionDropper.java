package io.faro.testing;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.auth.Identity;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.proto.MessageType;
import io.netty.channel.Channel;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Fault injection for tests of real processes ({@link TestingOptions#DROP_PER_MILLE}, applied by
 * {@link FaultInjection} to the push and fetch handlers): closes the connection on about {@code
 * perMille} of every 1000 requests, half of them before the request is handled and half after (the
 * work done, the answer lost), so that clients see both kinds of failure. Each drop is logged, its
 * reason starting with "fault injection".
 */
public final class ConnectionDropper implements RequestHandler {
  private final RequestHandler delegate;
  private final int perMille;

  public ConnectionDropper(RequestHandler delegate, int perMille) {
    this.delegate = requireNonNull(delegate, "delegate is null");
    if (perMille < 0 || perMille > 1000) {
      throw new IllegalArgumentException("perMille must be in 0..1000: " + perMille);
    }
    this.perMille = perMille;
  }

  /** {@code handler} itself when {@code perMille} is 0, else a dropper around it. */
  public static RequestHandler wrap(RequestHandler handler, int perMille) {
    return perMille == 0 ? handler : new ConnectionDropper(handler, perMille);
  }

  /** The wrapped handler's: fault injection never opens what authentication closes. */
  @Override
  public Optional<String> refusal(MessageType type, Message meta, Identity who) {
    return delegate.refusal(type, meta, who);
  }

  @Override
  public Set<MessageType> openToAnyone() {
    return delegate.openToAnyone();
  }

  @Override
  public void connectionClosed(Channel channel) {
    delegate.connectionClosed(channel);
  }

  @Override
  public void handle(Request request, Responder responder) {
    int draw = ThreadLocalRandom.current().nextInt(2000);
    if (draw < perMille) {
      responder.dropConnection(
          "fault injection: " + request.type() + " dropped before it was handled");
      return;
    }
    delegate.handle(request, responder);
    if (draw < 2 * perMille) {
      responder.dropConnection("fault injection: " + request.type() + " handled, its answer lost");
    }
  }
}
