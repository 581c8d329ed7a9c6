package io.faro.worker.partition;

/**
 * How partition writers buffer, cut chunks and split.
 *
 * @param flushBufferSize buffered bytes of one partition that trigger a flush
 * @param chunkSize bytes after which the writer ends the current chunk (at a part boundary)
 * @param splitThreshold appended bytes after which the location asks clients to move on
 * @param hardSplit whether, past the threshold, parts are refused (SPLIT) rather than taken with
 *     SOFT_SPLIT
 * @param commitSync whether a commit forces the file to the disk (faro.worker.commit.sync)
 */
public record WriterSettings(
    long flushBufferSize,
    long chunkSize,
    long splitThreshold,
    boolean hardSplit,
    boolean commitSync,
    long runBytes) {
  /** faro.worker.runs.bytes by default. */
  public static final long DEFAULT_RUN_BYTES = 64L << 20;

  public WriterSettings {
    if (flushBufferSize <= 0 || chunkSize <= 0 || splitThreshold <= 0 || runBytes <= 0) {
      throw new IllegalArgumentException(
          "sizes must be positive: flush "
              + flushBufferSize
              + ", chunk "
              + chunkSize
              + ", split threshold "
              + splitThreshold
              + ", run "
              + runBytes);
    }
  }

  /** With runs of {@link #DEFAULT_RUN_BYTES} on disks of the runs layout. */
  public WriterSettings(
      long flushBufferSize,
      long chunkSize,
      long splitThreshold,
      boolean hardSplit,
      boolean commitSync) {
    this(flushBufferSize, chunkSize, splitThreshold, hardSplit, commitSync, DEFAULT_RUN_BYTES);
  }

  /** Commits without forcing files to the disk. */
  public WriterSettings(
      long flushBufferSize, long chunkSize, long splitThreshold, boolean hardSplit) {
    this(flushBufferSize, chunkSize, splitThreshold, hardSplit, false);
  }

  /** Without a practical split threshold; commits without forcing files to the disk. */
  public WriterSettings(long flushBufferSize, long chunkSize) {
    this(flushBufferSize, chunkSize, Long.MAX_VALUE, false, false);
  }
}
