package io.faro.bench.jmh;

import io.faro.bench.workload.DataKind;
import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchDecoder;
import io.faro.common.batch.BatchEncoder;
import io.faro.common.batch.BatchFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
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
 * One batch of {@code batchSize} record bytes (faro.client.push.batch.size): encoding as a map task
 * does it (with {@code codec}: LZ4, ZSTD at level 1 or none; CRC32C always) and decoding as a
 * reader does it (CRC check, then LZ4). MB/s = ops/s x batchSize / 2^20.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BatchCodecBenchmark {
  @Param({"LZ4", "ZSTD", "NONE"})
  public BatchFormat.Codec codec;

  @Param({"COMPRESSIBLE", "RANDOM"})
  public DataKind data;

  @Param({"65536"})
  public int batchSize;

  private BatchEncoder encoder;
  private BatchDecoder decoder;
  private byte[] raw;
  private ByteBuf encodedBatch;
  private int batchId;

  @Setup(Level.Trial)
  public void setUp() {
    encoder =
        new BatchEncoder(codec, BatchEncoder.DEFAULT_ZSTD_LEVEL, PooledByteBufAllocator.DEFAULT);
    decoder = new BatchDecoder();
    raw = SampleRecords.raw(batchSize, data);
    encodedBatch = SampleRecords.batches(1, batchSize, data, codec);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    encodedBatch.release();
    encoder.close();
    decoder.close();
  }

  @Benchmark
  public void encode(Blackhole blackhole) {
    ByteBuf batch = encoder.encode(0, 0, batchId++, raw, 0, raw.length);
    blackhole.consume(batch.readableBytes());
    batch.release();
  }

  @Benchmark
  public void decode(Blackhole blackhole) {
    BatchDecoder.Cursor cursor = decoder.cursor(encodedBatch, "benchmark");
    Batch batch = cursor.next((mapId, attemptId, id) -> true);
    blackhole.consume(batch.length());
  }
}
