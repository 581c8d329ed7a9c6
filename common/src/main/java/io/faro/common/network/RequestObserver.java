package io.faro.common.network;

import io.faro.proto.MessageType;

/**
 * Told of every request a {@link TransportServer} serves: as it arrives (on the connection's event
 * loop) and as it is answered (on whichever thread answers). For counters and latencies; must be
 * cheap and never block.
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
   * The request was answered, with an error when {@code failed} (a dropped connection counts as
   * failed); {@code arrival} is what {@link #arrived} returned for it.
   */
  void answered(MessageType type, long arrival, boolean failed);
}
