package io.faro.worker.status;

import io.faro.worker.storage.IoMode;
import java.util.List;

/**
 * One reading of the worker process's own accounting. Sizes are bytes; a value the platform does
 * not offer is 0. Peaks are since the process (or, for the memory budget, the worker) started;
 * {@link WorkerStatusSampler} says how each is obtained.
 *
 * @param processCpuNanos CPU time of every thread of the process
 * @param rssBytes resident set size now
 * @param peakRssBytes the kernel's high-water mark of the resident set
 * @param directMemoryBytes direct memory now: Netty's counter plus the JDK's "direct" pool
 * @param peakDirectMemoryBytes the largest direct memory sampled
 * @param memoryBudgetUsedBytes pushed data held now, as counted against faro.worker.memory.budget
 * @param peakMemoryBudgetUsedBytes the most pushed data held at once
 * @param memoryPauseBytes the count at which push connections pause
 * @param memoryPauses times push connections paused since start
 * @param memoryPausedMs how long they were paused in all
 * @param heapUsedBytes heap in use now
 * @param heapMaxBytes the heap's limit (-Xmx)
 * @param uptimeMs time since the JVM started
 * @param diskIoModes how each disk does its I/O, in faro.worker.dirs order
 */
public record WorkerStatus(
    long processCpuNanos,
    long rssBytes,
    long peakRssBytes,
    long directMemoryBytes,
    long peakDirectMemoryBytes,
    long memoryBudgetUsedBytes,
    long peakMemoryBudgetUsedBytes,
    long memoryPauseBytes,
    long memoryPauses,
    long memoryPausedMs,
    long heapUsedBytes,
    long heapMaxBytes,
    long uptimeMs,
    List<IoMode> diskIoModes) {
  public WorkerStatus {
    diskIoModes = List.copyOf(diskIoModes);
  }
}
