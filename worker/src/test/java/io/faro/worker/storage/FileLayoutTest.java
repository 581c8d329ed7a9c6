package io.faro.worker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** A partition file's path names its location, and reads back to it. */
class FileLayoutTest {
  private static final Path ROOT = Path.of("/data1/faro");

  @Test
  void aPartitionFilesPathReadsBackToItsLocation() {
    PartitionKey key = new PartitionKey(new ShuffleId(new AppId("app-20261125_0001"), 7), 42, 3);
    Path file = FileLayout.partitionFile(ROOT, key);
    assertThat(file).isEqualTo(ROOT.resolve("app-20261125_0001/7/42-3.data"));
    assertThat(FileLayout.parse(ROOT, file)).contains(key);
  }

  @Test
  void otherPathsAreNotPartitionFiles() {
    assertThat(FileLayout.parse(ROOT, ROOT.resolve("app/7/42-3.data.tmp"))).isEmpty();
    assertThat(FileLayout.parse(ROOT, ROOT.resolve("app/seven/42-3.data"))).isEmpty();
    assertThat(FileLayout.parse(ROOT, ROOT.resolve("app/7/extra/42-3.data"))).isEmpty();
    assertThat(FileLayout.parse(ROOT, ROOT.resolve(".faro-meta/000005.log"))).isEmpty();
    assertThat(FileLayout.parse(ROOT, ROOT.resolve("app/7/99999999999-3.data"))).isEmpty();
  }

  @Test
  void anAppIdMadeSafeReadsBackAsItsDirectoryName() {
    PartitionKey key = new PartitionKey(new ShuffleId(new AppId("my app"), 1), 0, 0);
    Path file = FileLayout.partitionFile(ROOT, key);
    // Not the original id: its shuffles are unknown to the masters, which expire them.
    assertThat(FileLayout.parse(ROOT, file))
        .hasValueSatisfying(k -> assertThat(k.shuffle().app().value()).startsWith("_my_app-"));
  }
}
