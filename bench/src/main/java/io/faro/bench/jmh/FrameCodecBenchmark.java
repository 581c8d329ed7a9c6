package io.faro.bench.jmh;

import io.faro.common.network.Frame;
import io.faro.common.network.FrameDecoder;
import io.faro.common.network.FrameEncoder;
import io.faro.common.network.FrameKind;
import io.faro.common.network.OutboundFrame;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.ShuffleKeyP;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The transport's frame codec on a push frame ({@code PushRequest} meta with one part per
 * partition, a body of {@code bodySize} bytes), through Netty's pipeline on an {@link
 * EmbeddedChannel}. The body is never copied by either side, so the cost per frame should be nearly
 * independent of its size: compare the two sizes.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class FrameCodecBenchmark {
  @Param({"65536", "1048576"})
  public int bodySize;

  /** Parts in the frame's meta: one per partition the frame carries batches of. */
  @Param({"16"})
  public int parts;

  private EmbeddedChannel encoder;
  private EmbeddedChannel decoder;
  private PushRequest meta;
  private ByteBuf body;
  private ByteBuf encoded;
  private long requestId;

  @Setup(Level.Trial)
  public void setUp() {
    PushRequest.Builder request =
        PushRequest.newBuilder()
            .setShuffle(
                ShuffleKeyP.newBuilder()
                    .setAppId("application_1700000000000_0001")
                    .setShuffleId(3));
    for (int p = 0; p < parts; p++) {
      request.addParts(
          PushPart.newBuilder().setPartitionId(p * 37).setEpoch(0).setLength(bodySize / parts));
    }
    meta = request.build();
    body = PooledByteBufAllocator.DEFAULT.directBuffer(bodySize).writeZero(bodySize);
    encoder = new EmbeddedChannel(FrameEncoder.INSTANCE);
    decoder = new EmbeddedChannel(new FrameDecoder(Integer.MAX_VALUE));
    encoded = PooledByteBufAllocator.DEFAULT.directBuffer();
    encoder.writeOutbound(new OutboundFrame(FrameKind.REQUEST, 1, meta, body.retainedDuplicate()));
    for (ByteBuf part; (part = encoder.readOutbound()) != null; ) {
      encoded.writeBytes(part);
      part.release();
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    encoder.finishAndReleaseAll();
    decoder.finishAndReleaseAll();
    body.release();
    encoded.release();
  }

  /** Header and meta written; the body passed on as a retained buffer. */
  @Benchmark
  public void encode(Blackhole blackhole) {
    encoder.writeOutbound(
        new OutboundFrame(FrameKind.REQUEST, ++requestId, meta, body.retainedDuplicate()));
    for (ByteBuf part; (part = encoder.readOutbound()) != null; ) {
      blackhole.consume(part.readableBytes());
      part.release();
    }
  }

  /** Length checked, meta parsed, body sliced from the received bytes. */
  @Benchmark
  public void decode(Blackhole blackhole) {
    decoder.writeInbound(encoded.retainedDuplicate());
    Frame frame = decoder.readInbound();
    blackhole.consume(frame.meta());
    frame.release();
  }
}
