package io.faro.worker.partition;

/**
 * What became of one pushed part. Normal outcomes, not errors: the push handler maps each to the
 * part's status in the answer.
 */
public enum AppendStatus {
  /** Appended to the partition's buffer. */
  ACCEPTED,
  /** Appended, but the file passed its split threshold: the client moves on for later batches. */
  SOFT_SPLIT,
  /**
   * Not appended: this location takes no more data (its file failed, its disk is unhealthy, it
   * passed a hard split threshold, or its replica was lost); push elsewhere.
   */
  SPLIT,
  /** Not appended: the shuffle was committed; the data is from a losing attempt. */
  STAGE_ENDED,
  /** Not appended: no such partition location here (never reserved, or cleaned up). */
  NOT_HERE,
  /**
   * Appended here, but the replica did not confirm it; the location takes no more data. Only a
   * primary with a replica answers it (see io.faro.worker.push.FrameAppender), never a writer.
   */
  REPLICA_FAILED
}
