package io.faro.spark;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.MergedBlockMeta;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleMergedBlockId;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Spark asks a shuffle manager for a block resolver, but no Spark block of a Faro shuffle ever
 * lives on an executor: readers fetch from Faro workers. Any call here is a routing bug, so it
 * fails loudly instead of returning nothing.
 */
final class FaroShuffleBlockResolver implements org.apache.spark.shuffle.ShuffleBlockResolver {
  @Override
  public ManagedBuffer getBlockData(BlockId blockId, Option<String[]> dirs) {
    throw new UnsupportedOperationException(
        "shuffle block " + blockId + " belongs to a Faro shuffle and is served by Faro workers");
  }

  // scala.collection.immutable.Seq: Spark 4 (Scala 2.13) returns it, and for Spark 3.5 (Scala 2.12,
  // scala.collection.Seq) it is a narrower return type, so one source serves both.
  @Override
  public Seq<ManagedBuffer> getMergedBlockData(
      ShuffleMergedBlockId blockId, Option<String[]> dirs) {
    throw new UnsupportedOperationException(
        "Faro shuffles have no Spark push-merged blocks: " + blockId);
  }

  @Override
  public MergedBlockMeta getMergedBlockMeta(ShuffleMergedBlockId blockId, Option<String[]> dirs) {
    throw new UnsupportedOperationException(
        "Faro shuffles have no Spark push-merged blocks: " + blockId);
  }

  @Override
  public void stop() {}
}
