package io.faro.client.push;

import io.faro.common.network.HostPort;
import java.util.ArrayList;
import java.util.List;

/**
 * Batches of one map attempt gathered for one worker's push port, not yet sent (and, once sent, the
 * batches its answer speaks of, in order). Owns its batches until it hands them on.
 */
final class PendingFrame {
  final HostPort address;
  final List<PushedBatch> parts = new ArrayList<>();
  long bytes;

  PendingFrame(HostPort address) {
    this.address = address;
  }

  /** Adds {@code batch} (takes it). */
  void add(PushedBatch batch) {
    parts.add(batch);
    bytes += batch.batch().readableBytes();
  }

  /** Releases every batch of the frame. */
  void release() {
    parts.forEach(p -> p.batch().release());
  }
}
