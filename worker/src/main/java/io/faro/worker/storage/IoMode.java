package io.faro.worker.storage;

/** How a worker reads and writes its partition files ({@code faro.worker.io.mode}). */
public enum IoMode {
  /**
   * Per tier: direct I/O on nvme disks whose file system supports it; buffered I/O on ssd and hdd
   * disks, and on nvme disks whose file system does not take {@code O_DIRECT}. On a disk priced in
   * requests or seeks, the page cache serves what reducers read soon after it was written, and
   * write-back merges writes and skips those of files deleted first; on a fast local disk, direct
   * I/O saves the page cache's CPU.
   */
  AUTO,
  /**
   * Direct I/O ({@code O_DIRECT}) on every disk: writes from aligned staging buffers, fetches read
   * on per-disk reader threads. A disk that cannot do it stops the worker at start.
   */
  DIRECT,
  /** Through the page cache: buffered writes, and reads through it on the reader threads. */
  BUFFERED
}
