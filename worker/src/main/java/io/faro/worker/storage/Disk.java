package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** One disk of this worker: its position in {@code faro.worker.dirs}, directory, tier and flusher. */
public final class Disk {
  private final int index;
  private final DiskDir dir;
  private final DiskFlusher flusher;

  Disk(int index, DiskDir dir, DiskFlusher flusher) {
    this.index = index;
    this.dir = requireNonNull(dir, "dir is null");
    this.flusher = requireNonNull(flusher, "flusher is null");
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

  public PartitionFile newPartitionFile(PartitionKey key) {
    return new PartitionFile(key, FileLayout.partitionFile(root(), key));
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
    return "disk " + index + " (" + dir + ")";
  }
}
