package io.faro.worker.storage;

/** How a worker reads and writes its partition files ({@code faro.worker.io.mode}). */
public enum IoMode {
  /** Direct I/O on every disk whose file system supports it, buffered I/O on the others. */
  AUTO,
  /**
   * Direct I/O ({@code O_DIRECT}) on every disk: writes from aligned staging buffers, fetches read
   * on per-disk reader threads. A disk that cannot do it stops the worker at start.
   */
  DIRECT,
  /** Through the page cache: buffered writes, fetches served with {@code sendfile}. */
  BUFFERED
}
