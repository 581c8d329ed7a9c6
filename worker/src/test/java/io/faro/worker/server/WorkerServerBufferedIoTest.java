package io.faro.worker.server;

import io.faro.worker.storage.IoMode;

/** Every test of {@link WorkerServerTest}, on disks written through the page cache. */
class WorkerServerBufferedIoTest extends WorkerServerTest {
  @Override
  String ioMode() {
    return "buffered";
  }

  @Override
  IoMode expectedIoMode() {
    return IoMode.BUFFERED;
  }
}
