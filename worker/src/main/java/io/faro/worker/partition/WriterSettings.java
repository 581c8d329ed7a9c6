package io.faro.worker.partition;

/**
 * How partition writers buffer and cut chunks.
 *
 * @param flushBufferSize buffered bytes of one partition that trigger a flush
 * @param chunkSize bytes after which the writer ends the current chunk (at a part boundary)
 */
public record WriterSettings(long flushBufferSize, long chunkSize) {
  public WriterSettings {
    if (flushBufferSize <= 0 || chunkSize <= 0) {
      throw new IllegalArgumentException("sizes must be positive: flush " + flushBufferSize + ", chunk " + chunkSize);
    }
  }
}
