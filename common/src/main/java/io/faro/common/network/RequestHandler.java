package io.faro.common.network;

import com.google.protobuf.Message;
import io.faro.common.auth.Identity;
import io.faro.proto.MessageType;
import io.netty.channel.Channel;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntSupplier;

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

  /**
   * The oldest wire protocol this server takes in a handshake now (see {@link
   * io.faro.common.version.FeatureLevel#oldestProtocol}); an older client is refused with an error
   * naming both versions. Every protocol this release answers, by default.
   */
  default int oldestProtocol() {
    return io.faro.common.version.Compatibility.OLDEST_PROTOCOL;
  }

  /**
   * {@code handler}, taking in its handshakes only protocols from {@code oldestProtocol} (read at
   * each handshake) up: for a server whose floor follows the cluster's feature level.
   */
  static RequestHandler requiring(RequestHandler handler, IntSupplier oldestProtocol) {
    return new RequestHandler() {
      @Override
      public void handle(Request request, Responder responder) {
        handler.handle(request, responder);
      }

      @Override
      public Optional<String> refusal(MessageType type, Message meta, Identity who) {
        return handler.refusal(type, meta, who);
      }

      @Override
      public Set<MessageType> openToAnyone() {
        return handler.openToAnyone();
      }

      @Override
      public void connectionClosed(Channel channel) {
        handler.connectionClosed(channel);
      }

      @Override
      public int oldestProtocol() {
        return oldestProtocol.getAsInt();
      }
    };
  }
}
