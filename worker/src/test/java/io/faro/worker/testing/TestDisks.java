package io.faro.worker.testing;

import io.faro.common.id.DiskTier;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.DiskThreads;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.IoMode;
import io.faro.worker.storage.Layout;
import java.nio.file.Path;
import java.util.stream.IntStream;

/** Real disk directories for tests of one store: SSDs d0, d1... under a test's directory. */
public final class TestDisks {
  private TestDisks() {}

  /**
   * {@code count} SSD directories under {@code root}, one flusher and one reader thread each, the
   * files layout, 8 MiB of read buffers per disk.
   */
  public static Disks ssds(Path root, int count) {
    return Disks.open(
        IntStream.range(0, count)
            .mapToObj(i -> new DiskDir(root.resolve("d" + i), DiskTier.SSD))
            .toList(),
        new Disks.Options(
            Disks.Options.everyTier(new DiskThreads(1, 1)),
            IoMode.AUTO,
            8L << 20,
            1000,
            Disks.Options.every(Layout.FILES),
            0),
        "test");
  }
}
