package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One disk of this worker: its position in {@code faro.worker.dirs}, directory, tier, flusher,
 * and, when it does direct I/O, its reader.
 */
public final class Disk {
  private final int index;
  private final DiskDir dir;
  private final DiskFlusher flusher;
  private final DirectIo direct;
  private final DiskReader reader;

  Disk(int index, DiskDir dir, DiskFlusher flusher, DirectIo direct, DiskReader reader) {
    this.index = index;
    this.dir = requireNonNull(dir, "dir is null");
    this.flusher = requireNonNull(flusher, "flusher is null");
    if ((direct == null) != (reader == null)) {
      throw new IllegalArgumentException("a disk with direct I/O needs a reader, and only then");
    }
    this.direct = direct;
    this.reader = reader;
  }

  public int index() {
    return index;
  }

  public Path root() {
    return dir.path();
  }

  public DiskTier tier() {
    return dir.tier();
  }

  public DiskFlusher flusher() {
    return flusher;
  }

  /** The reader of a disk with direct I/O; empty for one written through the page cache. */
  public Optional<DiskReader> reader() {
    return Optional.ofNullable(reader);
  }

  public IoMode ioMode() {
    return direct == null ? IoMode.BUFFERED : IoMode.DIRECT;
  }

  public PartitionFile newPartitionFile(PartitionKey key) {
    return new PartitionFile(key, FileLayout.partitionFile(root(), key), direct);
  }

  /** Bytes the worker may still write here. A blocking call: not for event loops. */
  public long usableBytes() throws IOException {
    return Files.getFileStore(root()).getUsableSpace();
  }

  /** Size of the file system. A blocking call: not for event loops. */
  public long capacityBytes() throws IOException {
    return Files.getFileStore(root()).getTotalSpace();
  }

  @Override
  public String toString() {
    return "disk " + index + " (" + dir + ", " + ioMode().name().toLowerCase(java.util.Locale.ROOT) + " I/O)";
  }
}
