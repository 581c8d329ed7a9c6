package io.faro.common.network;

import io.netty.channel.DefaultMessageSizeEstimator;
import io.netty.channel.FileRegion;
import io.netty.channel.MessageSizeEstimator;

/**
 * Counts what waits in a connection's outbound buffer, file regions included: Netty's default
 * counts a region as 0 bytes, so answers sent from files would escape
 * faro.network.max.pending.answer.bytes and the write-buffer marks, and a peer that never reads
 * could keep any number of them (each an open file) queued.
 */
final class AnswerSizeEstimator implements MessageSizeEstimator {
  static final AnswerSizeEstimator INSTANCE = new AnswerSizeEstimator();

  private static final Handle DEFAULT = DefaultMessageSizeEstimator.DEFAULT.newHandle();

  private static final Handle HANDLE =
      msg ->
          msg instanceof FileRegion region
              ? (int) Math.min(Integer.MAX_VALUE, region.count() - region.transferred())
              : DEFAULT.size(msg);

  private AnswerSizeEstimator() {}

  @Override
  public Handle newHandle() {
    return HANDLE;
  }
}
