package io.faro.worker.storage;

/**
 * Hears what a {@link PartitionFile} does to its disk: the bytes it adds (or, deleted, removes),
 * and how long its writes take. Called on the file's flusher thread.
 */
@FunctionalInterface
public interface FileAccounting {
  /** The file takes {@code delta} bytes more (or, negative, fewer) on its disk. */
  void used(long delta);

  /** A write of {@code bytes} took {@code nanos}. */
  default void wrote(long bytes, long nanos) {}
}
