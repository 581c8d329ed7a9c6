package io.faro.common.network;

import com.google.protobuf.Message;
import io.faro.common.auth.Identity;
import io.faro.proto.MessageType;
import io.netty.channel.Channel;
import java.util.Optional;
import java.util.Set;

/**
 * Serves the requests of one server. Runs on a Netty event loop: decode, validate, enqueue and
 * reply, nothing else; blocking work goes to the handler's own threads and answers through the
 * thread-safe {@link Responder} later. A handler that throws answers INTERNAL.
 */
public interface RequestHandler {
  void handle(Request request, Responder responder);

  /**
   * With faro.auth.enabled, asked before {@link #handle} for every request: why a connection that
   * proved to be {@code who} may not send it, or empty when it may. A refused request is answered
   * UNAUTHENTICATED and its connection closed. Every request is allowed by default.
   */
  default Optional<String> refusal(MessageType type, Message meta, Identity who) {
    return Optional.empty();
  }

  /**
   * With faro.auth.enabled, the requests this server takes from a connection that proved nothing
   * (besides the handshake): those {@link #refusal} allows to {@link Identity#ANONYMOUS}. Any other
   * request of such a connection is refused on its frame's header, before it is buffered or parsed.
   * None by default.
   */
  default Set<MessageType> openToAnyone() {
    return Set.of();
  }

  /** Called on the event loop when a connection closes. */
  default void connectionClosed(Channel channel) {}
}
