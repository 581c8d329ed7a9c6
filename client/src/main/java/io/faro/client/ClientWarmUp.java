package io.faro.client;

import io.faro.common.batch.BatchDecoder;
import io.faro.common.batch.BatchEncoder;
import io.faro.common.batch.BatchFormat;
import io.faro.common.network.MessageCodecs;
import io.faro.proto.MapperEndRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;

/**
 * Loads and initialises what a JVM's first shuffle would otherwise load on a task's thread, while
 * the JVM has nothing better to do: the wire messages (every protobuf type and the codecs' tables),
 * the batch codec (LZ4 and CRC32C, through one batch encoded and decoded in memory) and the classes
 * of the push and fetch paths. It sends nothing and connects nowhere.
 */
public final class ClientWarmUp {
  /** Classes of the map and reduce task paths, loaded and initialised. */
  private static final List<String> CLASSES =
      List.of(
          "io.faro.client.push.MapPusher",
          "io.faro.client.push.PushWindow",
          "io.faro.client.push.PushBounds",
          "io.faro.client.push.PushAnswers",
          "io.faro.client.push.PartitionBuffers",
          "io.faro.client.push.Revivals",
          "io.faro.client.fetch.PartitionReader",
          "io.faro.client.fetch.ChunkPrefetch",
          "io.faro.client.fetch.Failover",
          "io.faro.client.fetch.BatchFilter",
          "io.faro.client.fetch.ReducerFileGroups",
          "io.faro.common.network.TransportClient",
          "io.faro.common.network.FrameEncoder",
          "io.faro.common.network.FrameDecoder");

  private ClientWarmUp() {}

  /**
   * Does the warm-up on the calling thread.
   *
   * @param codec how batches are compressed (faro.client.compression.codec)
   */
  public static void run(BatchFormat.Codec codec) {
    MessageCodecs.typeOf(MapperEndRequest.getDefaultInstance());
    byte[] raw = new byte[1024];
    try (BatchEncoder encoder =
            new BatchEncoder(
                codec, BatchEncoder.DEFAULT_ZSTD_LEVEL, PooledByteBufAllocator.DEFAULT);
        BatchDecoder decoder = new BatchDecoder()) {
      ByteBuf batch = encoder.encode(0, 0, 0, raw, 0, raw.length);
      try {
        decoder.decode(batch, "warm-up", (map, attempt, id) -> true, b -> {});
      } finally {
        batch.release();
      }
    }
    ClassLoader loader = ClientWarmUp.class.getClassLoader();
    for (String name : CLASSES) {
      try {
        Class.forName(name, true, loader);
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("warm-up names a class that is gone: " + name, e);
      }
    }
  }
}
