package io.faro.worker;

import static io.faro.worker.WorkerOptions.IO_READ_BUFFER_PER_DISK;
import static io.faro.worker.WorkerOptions.MEMORY_BUDGET;

import io.faro.common.config.ConfigException;

/**
 * The worker's memory arithmetic: the push budget's share of the JVM's direct memory, the check
 * that the budget and the disks' buffers leave room for network buffers, and the heap a held and a
 * written partition location are counted at. Settings are checked against it once, at start.
 */
final class MemorySizing {
  /** The budget's share of the JVM's direct memory limit when none is configured. */
  static final int AUTO_BUDGET_PERCENT = 60;

  /** The largest budget accepted, as a share of the JVM's direct memory limit. */
  static final int MAX_BUDGET_PERCENT = 90;

  /**
   * Heap one written partition location is budgeted (its writer, key, file and chunk list), within
   * a quarter of the heap.
   */
  static final long HEAP_PER_PARTITION = 1024;

  /**
   * Heap one held partition location is budgeted, idle or written: an idle one takes 12 to 36 bytes
   * of its shuffle's table; within a quarter of the heap, with the written ones' share.
   */
  static final long HEAP_PER_HELD_PARTITION = 128;

  /** faro.worker.max.partitions as configured, or derived from {@code maxHeap} when 0. */
  static int maxPartitions(int configured, long maxHeap) {
    return configured > 0 ? configured : perQuarterHeap(maxHeap, HEAP_PER_HELD_PARTITION);
  }

  /** faro.worker.max.written.partitions as configured, or derived from {@code maxHeap} when 0. */
  static int maxWrittenPartitions(int configured, long maxHeap) {
    return configured > 0 ? configured : perQuarterHeap(maxHeap, HEAP_PER_PARTITION);
  }

  private static int perQuarterHeap(long maxHeap, long each) {
    return (int) Math.max(1_000, Math.min(Integer.MAX_VALUE, maxHeap / 4 / each));
  }

  /**
   * The budget in bytes: a share of {@code maxDirect} (the JVM's direct memory limit) when not
   * configured; a configured one that would leave the JVM no room for receive buffers is refused
   * rather than left to end in OutOfMemoryError under load.
   */
  static long memoryBudget(long configured, long maxDirect) {
    if (configured == 0) {
      return maxDirect / 100 * AUTO_BUDGET_PERCENT;
    }
    if (configured > maxDirect / 100 * MAX_BUDGET_PERCENT) {
      throw new ConfigException(
          "faro.worker.memory.budget "
              + configured
              + " is more than "
              + MAX_BUDGET_PERCENT
              + "% of the "
              + maxDirect
              + " bytes of direct memory this JVM may "
              + "use: lower it, or raise -XX:MaxDirectMemorySize (FARO_JAVA_OPTS for bin/faro)");
    }
    return configured;
  }

  /**
   * Refuses a {@code budget} that, with the disks' buffers ({@code diskBytes}, {@code disks}
   * disks), leaves the JVM too little direct memory for network buffers ({@code maxDirect}: its
   * limit).
   */
  static void checkDirectMemory(
      long budget, long diskBytes, int disks, long readBufferPerDisk, long maxDirect) {
    long limit = maxDirect / 100 * MAX_BUDGET_PERCENT;
    if (budget + diskBytes > limit) {
      throw new ConfigException(
          MEMORY_BUDGET.key()
              + " ("
              + budget
              + ") plus the read buffers of "
              + disks
              + " disks ("
              + IO_READ_BUFFER_PER_DISK.key()
              + " "
              + readBufferPerDisk
              + ") and the flushers' staging buffers (direct I/O) come to "
              + (budget + diskBytes)
              + " bytes, more than "
              + MAX_BUDGET_PERCENT
              + "% of the "
              + maxDirect
              + " bytes of direct memory "
              + "this JVM may use: lower them, or raise "
              + "-XX:MaxDirectMemorySize (FARO_JAVA_OPTS for bin/faro)");
    }
  }

  private MemorySizing() {}
}
