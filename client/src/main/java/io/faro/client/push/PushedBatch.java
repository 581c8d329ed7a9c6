package io.faro.client.push;

import io.faro.common.id.PartitionLocation;
import io.netty.buffer.ByteBuf;

/**
 * One batch of a partition, pushed (or about to be) to {@code target} for the {@code attempts}+1-th
 * time. Owns {@code batch} until its worker acknowledged it, or it is handed on or released.
 */
record PushedBatch(int partition, PartitionLocation target, ByteBuf batch, int attempts) {
  /** The same batch, bound for the partition's location {@code next}, one attempt later. */
  PushedBatch again(PartitionLocation next) {
    return new PushedBatch(partition, next, batch, attempts + 1);
  }
}
