package io.faro.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.id.DiskTier;
import io.faro.worker.storage.DiskDir;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code local-cluster --worker-dirs}: the spec, the directories it names, and its errors. */
class WorkerDirsTest {
  private static final long MIB = 1 << 20;
  private final Path home = Path.of("/tmp/cluster/worker-3");

  @Test
  void eachItemIsADirectoryNamedByItsTier() {
    WorkerDirs dirs = WorkerDirs.parse("nvme:150m,hdd");

    assertThat(dirs.under(home))
        .containsExactly(
            new DiskDir(home.resolve("nvme"), DiskTier.NVME, 150 * MIB),
            new DiskDir(home.resolve("hdd"), DiskTier.HDD));
    assertThat(WorkerDirs.setting(dirs.under(home)))
        .isEqualTo(
            "faro.worker.dirs=/tmp/cluster/worker-3/nvme:nvme:157286400,"
                + "/tmp/cluster/worker-3/hdd:hdd");
  }

  @Test
  void anItemWithADirectoryGoesThereUnderTheWorkersName() {
    WorkerDirs dirs = WorkerDirs.parse("hdd:1g@/mnt/slow, ssd");

    assertThat(dirs.under(home))
        .containsExactly(
            new DiskDir(Path.of("/mnt/slow/worker-3/hdd"), DiskTier.HDD, 1L << 30),
            new DiskDir(home.resolve("ssd"), DiskTier.SSD));
  }

  @Test
  void aTierGivenTwiceNumbersItsSecondDirectory() {
    WorkerDirs dirs = WorkerDirs.parse(" HDD:1g , ssd, hdd ,hdd:2t");

    assertThat(dirs.items())
        .extracting(WorkerDirs.Item::name)
        .containsExactly("hdd", "ssd", "hdd-2", "hdd-3");
    assertThat(dirs.items())
        .extracting(WorkerDirs.Item::capacityBytes)
        .containsExactly(1L << 30, Long.MAX_VALUE, Long.MAX_VALUE, 2L << 40);
  }

  @Test
  void withoutTheOptionAWorkerHasOneSsdDirectoryNamedData() {
    assertThat(WorkerDirs.setting(WorkerDirs.DEFAULT.under(home)))
        .isEqualTo("faro.worker.dirs=/tmp/cluster/worker-3/data:ssd");
  }

  @Test
  void theDirectoriesAWorkerWasStartedWithAreReadBackFromItsCommandLine() {
    List<DiskDir> disks = WorkerDirs.parse("nvme:64m,hdd").under(home);
    List<String> command =
        List.of(
            "java", "worker", "--set", "faro.worker.host=x", "--set", WorkerDirs.setting(disks));

    assertThat(WorkerDirs.startedWith(command))
        .containsExactly(home.resolve("nvme"), home.resolve("hdd"));
    assertThat(WorkerDirs.startedWith(List.of("java", "master"))).isEmpty();
  }

  @Test
  void aBadItemIsNamedWithTheOptionAndTheAllowedTiers() {
    for (String[] bad :
        new String[][] {
          {"nvme:150m,tape", "'tape' names an unknown tier 'tape'"},
          {"ssd:lots", "'ssd:lots' has a capacity 'lots' that is not a size"},
          {"ssd:0", "'ssd:0' has a capacity that is not positive"},
          {"ssd:-1g", "'ssd:-1g' has a capacity that is not positive"},
          {"ssd:1g:2", "'ssd:1g:2' is not tier[:capacity][@DIR]"},
          {"nvme,,hdd", "'' is not tier[:capacity][@DIR]"},
          {":1g", "':1g' is not tier[:capacity][@DIR]"},
          {"ssd@relative/dir", "'ssd@relative/dir' names no absolute directory after @"},
          {"ssd@", "'ssd@' names no absolute directory after @"},
          {"", "'' is empty"},
        }) {
      assertThatThrownBy(() -> WorkerDirs.parse(bad[0]))
          .as(bad[0])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("--worker-dirs: " + bad[1])
          .hasMessageContaining("tier one of nvme, ssd, hdd")
          .hasMessageEndingWith("e.g. --worker-dirs nvme:150m,hdd");
    }
  }
}
