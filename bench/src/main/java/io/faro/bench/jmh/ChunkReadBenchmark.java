package io.faro.bench.jmh;

import io.faro.bench.workload.DataKind;
import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchDecoder;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.partition.PartitionCommit;
import io.faro.worker.partition.Reservation;
import io.faro.worker.storage.ChunkIndex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
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
 * Reading chunks of a committed partition file, written in setup by the worker's own writer: {@link
 * #readChunk} opens the file and reads one chunk into a direct buffer, as a fetch without sendfile
 * would (the worker serves fetches with sendfile, which JMH cannot drive without a socket); {@link
 * #readAndVerifyChunk} also walks the chunk's batches as a reader does (CRC32C of every batch, LZ4
 * decompression). The file was just written, so reads come from the page cache. MB/s = ops/s x
 * chunkSize / 2^20 (chunks end at a part boundary, so slightly more).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ChunkReadBenchmark {
  private static final int PART_SIZE = 64 * 1024;
  private static final long FILE_SIZE = 64L << 20;

  @Param({"8388608"})
  public int chunkSize;

  private WorkerFiles files;
  private Path file;
  private ChunkIndex chunks;
  private ByteBuffer buffer;
  private final BatchDecoder decoder = new BatchDecoder();
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    files = new WorkerFiles(256 * 1024, chunkSize);
    ShuffleId shuffle = new ShuffleId(new AppId("jmh-read"), 0);
    PartitionKey key = new PartitionKey(shuffle, 0, 0);
    files.store.reserve(shuffle, List.of(new Reservation(0, 0, 0)));
    ByteBuf part = SampleRecords.batches(1, PART_SIZE, DataKind.COMPRESSIBLE, true);
    try {
      for (long written = 0; written < FILE_SIZE; written += part.readableBytes()) {
        files.store.append(
            key, part.retainedSlice(), new FrameCharge(files.budget, part.readableBytes(), 1));
      }
    } finally {
      part.release();
    }
    PartitionCommit commit = files.store.commit(shuffle).join().committed().get(0);
    PartitionCommit.Committed committed = (PartitionCommit.Committed) commit;
    file = committed.file().orElseThrow();
    chunks = committed.chunks();
    long largest = 0;
    for (int c = 0; c < chunks.chunkCount(); c++) {
      largest = Math.max(largest, chunks.chunkLength(c));
    }
    buffer = ByteBuffer.allocateDirect((int) largest);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    files.close();
  }

  @Benchmark
  public int readChunk() throws IOException {
    return read(next++ % chunks.chunkCount());
  }

  @Benchmark
  public void readAndVerifyChunk(Blackhole blackhole) throws IOException {
    read(next++ % chunks.chunkCount());
    BatchDecoder.Cursor cursor = decoder.cursor(Unpooled.wrappedBuffer(buffer.flip()), "benchmark");
    for (Batch batch; (batch = cursor.next((mapId, attemptId, batchId) -> true)) != null; ) {
      blackhole.consume(batch.length());
    }
  }

  /** Reads chunk {@code chunk} into {@link #buffer}; returns its length. */
  private int read(int chunk) throws IOException {
    long offset = chunks.offset(chunk);
    int length = (int) chunks.chunkLength(chunk);
    buffer.clear().limit(length);
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      while (buffer.hasRemaining()) {
        if (channel.read(buffer, offset + buffer.position()) < 0) {
          throw new IOException("end of " + file + " inside chunk " + chunk);
        }
      }
    }
    return length;
  }
}
