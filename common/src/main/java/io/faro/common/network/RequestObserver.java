package io.faro.common.network;

import io.faro.proto.MessageType;

/**
 * Told of the requests a {@link TransportServer} serves: as each arrives (on the connection's event
 * loop) and as it is answered (on whichever thread answers). A request the server refuses before
 * handing it on (over faro.network limits: its connection is closed) is not seen. For counters and
 * latencies; must be cheap and never block.
 */
public interface RequestObserver {
  /** Observes nothing. */
  RequestObserver NONE =
      new RequestObserver() {
        @Override
        public long arrived(MessageType type) {
          return 0;
        }

        @Override
        public void answered(MessageType type, long arrival, boolean failed) {}
      };

  /** A request of {@code type} arrived; returns what {@link #answered} gets (e.g. a start time). */
  long arrived(MessageType type);

  /**
   * The request was answered, exactly once; {@code failed} when with an error, or when its answer
   * cannot arrive (the connection closed first, or is closed for leaving answers unread, or is
   * dropped on purpose); {@code arrival} is what {@link #arrived} returned for it.
   */
  void answered(MessageType type, long arrival, boolean failed);
}
