package io.faro.bench.run;

import static java.util.Objects.requireNonNull;

import io.faro.bench.workload.PartitionTally;
import io.faro.client.EngineShuffleId;
import io.faro.client.ShuffleClient;
import io.faro.client.fetch.PartitionReader;
import io.faro.common.batch.Batch;
import io.faro.common.network.HostPort;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One reader thread: takes partitions one at a time until none is left, reads each through a {@link
 * PartitionReader} (every map, as one reduce task would) and tallies every record it gets.
 */
final class ReadTask implements Callable<ReadTask.Result> {
  /**
   * What one reader thread read.
   *
   * @param read its tally, per partition
   * @param fetchedBytes bytes fetched as stored (compressed, with batch headers)
   */
  record Result(PartitionTally read, long fetchedBytes) {}

  private final ShuffleClient client;
  private final HostPort lifecycle;
  private final EngineShuffleId shuffle;
  private final int maps;
  private final int partitions;
  private final int recordSize;
  private final AtomicInteger nextPartition;
  private final Progress progress;

  ReadTask(
      ShuffleClient client,
      HostPort lifecycle,
      EngineShuffleId shuffle,
      int maps,
      int partitions,
      int recordSize,
      AtomicInteger nextPartition,
      Progress progress) {
    this.client = requireNonNull(client, "client is null");
    this.lifecycle = requireNonNull(lifecycle, "lifecycle is null");
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.maps = maps;
    this.partitions = partitions;
    this.recordSize = recordSize;
    this.nextPartition = requireNonNull(nextPartition, "nextPartition is null");
    this.progress = requireNonNull(progress, "progress is null");
  }

  @Override
  public Result call() {
    PartitionTally read = new PartitionTally(partitions);
    long fetched = 0;
    for (int p = nextPartition.getAndIncrement();
        p < partitions;
        p = nextPartition.getAndIncrement()) {
      try (PartitionReader reader = client.newReader(lifecycle, shuffle, maps, p, p + 1, 0, maps)) {
        Batch batch;
        while ((batch = reader.next()) != null) {
          read.addRecords(p, batch.data(), batch.length(), recordSize);
          progress.add(batch.length());
        }
        fetched += reader.bytesRead();
      }
    }
    return new Result(read, fetched);
  }
}
