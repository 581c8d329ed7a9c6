package io.faro.common.network;

/**
 * Serves the requests of one server. Runs on a Netty event loop: decode, validate, enqueue and
 * reply, nothing else; blocking work goes to the handler's own threads and answers through the
 * thread-safe {@link Responder} later. A handler that throws answers INTERNAL.
 */
public interface RequestHandler {
  void handle(Request request, Responder responder);

  /** Called on the event loop when a connection closes. */
  default void connectionClosed(io.netty.channel.Channel channel) {}
}
