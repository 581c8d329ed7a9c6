package io.faro.bench.jmh;

import io.faro.common.id.DiskTier;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.DiskThreads;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.IoMode;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A worker's storage without its servers, for benchmarks: one disk in a temporary directory (direct
 * or buffered I/O) with one flusher thread, a partition store and a memory budget, wired as {@code
 * WorkerServer} wires them. Closing removes the directory.
 */
final class WorkerFiles implements AutoCloseable {
  final Path dir;
  final Disks disks;
  final PartitionStore store;
  final MemoryBudget budget;
  private final ScheduledThreadPoolExecutor memoryThread;

  WorkerFiles(long flushBufferSize, long chunkSize) {
    this(flushBufferSize, chunkSize, IoMode.BUFFERED);
  }

  WorkerFiles(long flushBufferSize, long chunkSize, IoMode ioMode) {
    try {
      dir = Files.createTempDirectory("faro-jmh-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    disks =
        Disks.open(
            List.of(new DiskDir(dir, DiskTier.SSD)),
            new Disks.Options(
                Disks.Options.everyTier(new DiskThreads(1, 1)), ioMode, 64L << 20, 10_000),
            "faro-jmh");
    store = new PartitionStore(disks, new WriterSettings(flushBufferSize, chunkSize));
    memoryThread =
        new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("faro-jmh-memory", true));
    // Marks far above what the benchmarks hold: they bound their memory themselves.
    budget = new MemoryBudget(8L << 30, 7L << 30, store::flushBuffered, memoryThread);
  }

  @Override
  public void close() {
    store.close();
    disks.close();
    memoryThread.shutdownNow();
    try {
      memoryThread.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + dir, e);
    }
  }
}
