package io.faro.worker.partition;

/**
 * What became of one pushed part: the worker's side of the answer's status ({@code PushStatusP} on
 * the wire, the same names), which the push handler maps one to one, answering SLOW_DOWN for an OK
 * part while the worker's memory is above its pause mark. Normal outcomes, not errors.
 */
public enum PushStatus {
  /** Appended to the partition's buffer. */
  OK,
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
  REPLICA_FAILED,
  /**
   * Not appended: the location is idle, and this worker holds faro.worker.max.written.partitions
   * locations that received data; push elsewhere, to another worker.
   */
  WORKER_FULL
}
