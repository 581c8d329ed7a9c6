package io.faro.worker.status;

import static java.util.Objects.requireNonNull;

import com.sun.management.OperatingSystemMXBean;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.storage.IoMode;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the worker process's own accounting for {@code WorkerStatusRequest}: CPU time, resident
 * memory, direct memory, the memory budget and the heap.
 *
 * <p>How each peak is obtained:
 *
 * <ul>
 *   <li>resident memory: the kernel's high-water mark, {@code VmHWM} in {@code /proc/self/status}
 *       (exact);
 *   <li>memory budget: {@link MemoryBudget#peak()}, raised on every reserve (exact);
 *   <li>direct memory: neither Netty nor the JDK keeps a high-water mark, so this sampler reads
 *       both counters every {@link #SAMPLE_INTERVAL} on the worker's memory thread, and at every
 *       status request, and keeps the largest sum. A spike shorter than the interval can be missed;
 *       Netty's pooled arenas hold direct memory in whole chunks and give it back slowly, so the
 *       pooled part moves in steps that the sampler sees.
 * </ul>
 *
 * <p>Direct memory is Netty's own counter ({@link PlatformDependent#usedDirectMemory()}, kept only
 * when Netty allocates without the JDK's cleaner, else -1) plus the JDK's "direct" buffer pool
 * (every {@code ByteBuffer.allocateDirect}): each allocation is counted by exactly one of them.
 *
 * <p>Threads: {@link #sample} runs on the memory thread. {@link #status} runs on an RPC event loop
 * and reads only in-memory counters plus the resident-memory figures of the last sample, so the
 * event loop never reads a file.
 */
public final class WorkerStatusSampler {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerStatusSampler.class);
  static final Duration SAMPLE_INTERVAL = Duration.ofMillis(100);
  private static final Path PROC_STATUS = Path.of("/proc/self/status");

  /** Resident set now and its high-water mark, in bytes; zeros where /proc is not there. */
  record ResidentMemory(long rssBytes, long peakRssBytes) {
    static final ResidentMemory UNKNOWN = new ResidentMemory(0, 0);
  }

  private final MemoryBudget budget;
  private final List<IoMode> diskIoModes;
  private final Path procStatus;
  private final OperatingSystemMXBean os;
  private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
  private final BufferPoolMXBean directPool;
  private final AtomicLong peakDirect = new AtomicLong();
  // Written by the memory thread, read by event loops.
  private volatile ResidentMemory resident = ResidentMemory.UNKNOWN;

  /** Reads {@code budget} and reports {@code diskIoModes} (faro.worker.dirs order) as they are. */
  public WorkerStatusSampler(MemoryBudget budget, List<IoMode> diskIoModes) {
    this(budget, diskIoModes, PROC_STATUS);
  }

  WorkerStatusSampler(MemoryBudget budget, List<IoMode> diskIoModes, Path procStatus) {
    this.budget = requireNonNull(budget, "budget is null");
    this.diskIoModes = List.copyOf(diskIoModes);
    this.procStatus = requireNonNull(procStatus, "procStatus is null");
    this.os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    this.directPool =
        ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(pool -> pool.getName().equals("direct"))
            .findFirst()
            .orElse(null);
  }

  /**
   * Samples now and then every {@link #SAMPLE_INTERVAL} on {@code executor}, until it shuts down.
   */
  public void start(ScheduledExecutorService executor) {
    sample();
    try {
      executor.scheduleWithFixedDelay(
          this::sample,
          SAMPLE_INTERVAL.toMillis(),
          SAMPLE_INTERVAL.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // The worker is closing: nothing left to sample.
    }
  }

  /** Reads resident memory and direct memory; keeps the direct-memory peak. */
  void sample() {
    try {
      resident = readResident(procStatus);
      directMemory();
    } catch (RuntimeException e) {
      // An exception would cancel the periodic task: log and go on sampling.
      LOG.warn("Sampling the worker's memory failed", e);
    }
  }

  /** The current reading. Cheap: no file access, safe on an event loop. */
  public WorkerStatus status() {
    long direct = directMemory();
    MemoryUsage heap = memory.getHeapMemoryUsage();
    ResidentMemory rss = resident;
    return new WorkerStatus(
        Math.max(0, os.getProcessCpuTime()),
        rss.rssBytes(),
        rss.peakRssBytes(),
        direct,
        peakDirect.get(),
        budget.used(),
        budget.peak(),
        budget.pauseAt(),
        budget.pauses(),
        TimeUnit.NANOSECONDS.toMillis(budget.pausedNanos()),
        heap.getUsed(),
        Math.max(0, heap.getMax()),
        ManagementFactory.getRuntimeMXBean().getUptime(),
        diskIoModes);
  }

  private long directMemory() {
    long netty = Math.max(0, PlatformDependent.usedDirectMemory());
    long jdk = directPool == null ? 0 : Math.max(0, directPool.getMemoryUsed());
    long total = netty + jdk;
    if (total > peakDirect.get()) {
      peakDirect.accumulateAndGet(total, Math::max);
    }
    return total;
  }

  /**
   * VmRSS and VmHWM from a {@code /proc/<pid>/status} file ("VmRSS: 123456 kB"); zeros when the
   * file or a line is missing (not Linux) or unreadable.
   */
  static ResidentMemory readResident(Path statusFile) {
    List<String> lines;
    try {
      lines = Files.readAllLines(statusFile, StandardCharsets.UTF_8);
    } catch (IOException | SecurityException e) {
      return ResidentMemory.UNKNOWN;
    }
    return new ResidentMemory(
        kilobytesLine(lines, "VmRSS:") * 1024, kilobytesLine(lines, "VmHWM:") * 1024);
  }

  private static long kilobytesLine(List<String> lines, String prefix) {
    for (String line : lines) {
      if (line.startsWith(prefix)) {
        String[] fields = line.substring(prefix.length()).trim().split("\\s+");
        try {
          return Long.parseLong(fields[0]);
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }
}
