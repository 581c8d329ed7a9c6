package io.faro.bench.jmh;

import io.faro.bench.workload.DataKind;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.partition.PushStatus;
import io.faro.worker.partition.Reservation;
import io.faro.worker.storage.IoMode;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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

/**
 * The worker's ingest path below the network: pushed parts appended to partition writers, which
 * hand full buffers to the disk's flusher thread, which writes them to the partition files (into
 * the page cache: no fsync until the commit, as in the worker). The benchmark thread plays the push
 * event loop; it waits while more than {@link #IN_FLIGHT_LIMIT} bytes await their flush, as a
 * paused push connection would, so the rate measured is the sustained one: the slower of appending
 * and flushing. MB/s = ops/s x partSize / 2^20.
 *
 * <p>Each iteration writes a new shuffle, committed and deleted after it (not timed).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class PartitionAppendBenchmark {
  static final long IN_FLIGHT_LIMIT = 64L << 20;

  @Param({"64"})
  public int partitions;

  @Param({"BUFFERED", "DIRECT"})
  public IoMode ioMode;

  /** Bytes of one pushed part: one batch of a merged push frame. */
  @Param({"65536"})
  public int partSize;

  @Param({"262144"})
  public int flushBufferSize;

  private WorkerFiles files;
  private ByteBuf part;
  private ShuffleId shuffle;
  private int shuffleNumber;
  private PartitionKey[] keys;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    files = new WorkerFiles(flushBufferSize, 8L << 20, ioMode);
    part = SampleRecords.batches(1, partSize, DataKind.RANDOM, false);
  }

  @Setup(Level.Iteration)
  public void newShuffle() {
    shuffle = new ShuffleId(new AppId("jmh-append"), shuffleNumber++);
    List<Reservation> reservations = new ArrayList<>();
    keys = new PartitionKey[partitions];
    for (int p = 0; p < partitions; p++) {
      reservations.add(new Reservation(p, 0, 0));
      keys[p] = new PartitionKey(shuffle, p, 0);
    }
    files.store.reserve(shuffle, reservations);
  }

  @TearDown(Level.Iteration)
  public void dropShuffle() {
    files.store.commit(shuffle).join();
    files.store.expire(shuffle).join();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    part.release();
    files.close();
  }

  @Benchmark
  public PushStatus appendAndFlush() {
    while (files.budget.used() > IN_FLIGHT_LIMIT) {
      LockSupport.parkNanos(10_000); // leave the core to the flusher
    }
    PartitionKey key = keys[next++ % keys.length];
    return files.store.append(
        key, part.retainedSlice(), new FrameCharge(files.budget, part.readableBytes(), 1));
  }
}
