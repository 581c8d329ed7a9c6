package io.faro.bench.workload;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * What the benchmark's own work costs the client: generating and hashing each record when it is
 * written, and hashing it again when it is read. Measured on this thread before the run, so that
 * the client's CPU per GB can be read net of it; an engine would serialize and deserialize records
 * instead.
 */
public final class WorkloadCost {
  private static final long SAMPLE_BYTES = 64L << 20;

  private WorkloadCost() {}

  /** CPU seconds per GB (2^30 bytes) of records to generate, hash, and hash again. */
  public static double cpuSecondsPerGb(int recordSize, DataKind data, int partitions) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    if (!threads.isCurrentThreadCpuTimeSupported()) {
      return 0;
    }
    RecordGenerator generator = new RecordGenerator(0, 0, recordSize, partitions, data);
    PartitionTally tally = new PartitionTally(partitions);
    byte[] record = new byte[recordSize];
    long records = SAMPLE_BYTES / recordSize;
    long start = threads.getCurrentThreadCpuTime();
    for (long i = 0; i < records; i++) {
      int partition = generator.next(record);
      tally.add(partition, recordSize, RecordHash.of(record, 0, recordSize));
      tally.addRecords(partition, record, recordSize, recordSize);
    }
    long cpuNanos = threads.getCurrentThreadCpuTime() - start;
    return cpuNanos / 1e9 / ((double) (records * recordSize) / (1L << 30));
  }
}
