package io.faro.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.ConfigException;
import io.faro.common.config.ConfigOption;
import io.faro.common.config.FaroConf;
import io.faro.common.id.DiskTier;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.DiskThreads;
import io.faro.worker.storage.IoMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WorkerOptionsTest {
  /** Without secrets (these tests read other keys; the default's check is below). */
  private static final FaroConf OPEN = FaroConf.empty().with("faro.auth.enabled", "false");

  private static final FaroConf MINIMAL =
      OPEN.with("faro.worker.dirs", "/data1/faro:ssd, /data2/faro:hdd");

  @Test
  void asShippedAWorkerNeedsTheClusterSecret() {
    assertThatThrownBy(
            () -> WorkerSettings.from(FaroConf.empty().with("faro.worker.dirs", "/data1/faro:ssd")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("no cluster secret")
        .hasMessageContaining("faro.auth.cluster.secret.file")
        .hasMessageContaining("faro.auth.enabled=false");
  }

  @Test
  void everyKeyHasADefaultThatParsesAndADoc() {
    Set<String> keys = new HashSet<>();
    for (ConfigOption<?> option : WorkerOptions.ALL) {
      assertThat(option.key()).startsWith("faro.worker.");
      assertThat(keys.add(option.key())).as("unique key %s", option.key()).isTrue();
      assertThat(option.doc()).as("doc of %s", option.key()).isNotBlank();
      option.parse(option.defaultText());
    }
  }

  @Test
  void defaults() {
    WorkerSettings settings = WorkerSettings.from(MINIMAL.with("faro.worker.host", "w1.example"));
    assertThat(settings.ports().host()).isEqualTo("w1.example");
    assertThat(settings.ports().id()).isEmpty();
    assertThat(
            List.of(
                settings.ports().rpcPort(),
                settings.ports().pushPort(),
                settings.ports().fetchPort()))
        .containsExactly(9100, 9101, 9102);
    assertThat(settings.storage().dirs())
        .containsExactly(
            new DiskDir(Path.of("/data1/faro"), DiskTier.SSD),
            new DiskDir(Path.of("/data2/faro"), DiskTier.HDD));
    assertThat(settings.storage().flushBufferSize()).isEqualTo(256 * 1024);
    assertThat(settings.storage().diskThreads())
        .containsEntry(DiskTier.NVME, new DiskThreads(4, 4))
        .containsEntry(DiskTier.SSD, new DiskThreads(2, 2))
        .containsEntry(DiskTier.HDD, new DiskThreads(1, 1));
    assertThat(settings.storage().diskCheck().reserve(DiskTier.HDD)).isEqualTo(1L << 30);
    assertThat(settings.storage().chunkSize()).isEqualTo(8 << 20);
    assertThat(settings.masterLink().heartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(settings.storage().ioMode()).isEqualTo(IoMode.AUTO);
    assertThat(settings.storage().commitSync()).isFalse();
    assertThat(
            WorkerSettings.from(MINIMAL.with("faro.worker.commit.sync", "true"))
                .storage()
                .commitSync())
        .isTrue();
    assertThat(settings.diskOptions().readBufferPerDisk()).isEqualTo(64L << 20);
    assertThat(settings.memory().budget())
        .isEqualTo(io.netty.util.internal.PlatformDependent.maxDirectMemory() / 100 * 60);
    assertThat(settings.memory().pauseBytes()).isGreaterThan(settings.memory().resumeBytes());
    assertThat(WorkerSettings.from(MINIMAL).ports().host()).isNotBlank();
  }

  @Test
  void aBadIoModeOrTooSmallReadBufferNamesTheKeyAndWhatIsAllowed() {
    assertThatThrownBy(() -> WorkerSettings.from(MINIMAL.with("faro.worker.io.mode", "mmap")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.io.mode")
        .hasMessageContaining("auto, direct, buffered");
    assertThat(
            WorkerSettings.from(MINIMAL.with("faro.worker.io.mode", "Direct")).storage().ioMode())
        .isEqualTo(IoMode.DIRECT);
    assertThatThrownBy(
            () -> WorkerSettings.from(MINIMAL.with("faro.worker.io.read.buffer.per.disk", "16m")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.io.read.buffer.per.disk")
        .hasMessageContaining("faro.worker.chunk.size");
  }

  @Test
  void theBudgetAndTheDisksBuffersMustLeaveRoomInDirectMemory() {
    WorkerSettings settings =
        WorkerSettings.from(MINIMAL.with("faro.worker.memory.budget", "100m"));
    // An SSD (64m read buffers + 2 flushers x 1m staging) and an HDD in runs (64m + 1 reader x 1m
    // read around, no staging): 131m besides the 100m budget.
    assertThat(settings.storage().diskMemoryBytes()).isEqualTo(131L << 20);
    settings.checkDirectMemory(260L << 20);
    assertThatThrownBy(() -> settings.checkDirectMemory(250L << 20))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.memory.budget")
        .hasMessageContaining("faro.worker.io.read.buffer.per.disk")
        .hasMessageContaining("MaxDirectMemorySize");
    WorkerSettings buffered =
        WorkerSettings.from(
            MINIMAL
                .with("faro.worker.memory.budget", "100m")
                .with("faro.worker.io.mode", "buffered"));
    // Buffered disks read chunks into read buffers too; only the staging buffers are not there
    // (the HDD in runs keeps its read-around buffer).
    assertThat(buffered.storage().diskMemoryBytes()).isEqualTo(129L << 20);
    buffered.checkDirectMemory(255L << 20);
    assertThatThrownBy(() -> buffered.checkDirectMemory(249L << 20))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.io.read.buffer.per.disk");
    // And their read buffers must hold two chunks as well.
    assertThatThrownBy(
            () ->
                WorkerSettings.from(
                    MINIMAL
                        .with("faro.worker.io.mode", "buffered")
                        .with("faro.worker.io.read.buffer.per.disk", "16m")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.io.read.buffer.per.disk");
  }

  @Test
  void aBadTierNamesTheKeyAndTheTiers() {
    assertThatThrownBy(
            () -> WorkerSettings.from(OPEN.with("faro.worker.dirs", "/data1:ssd,/data2:floppy")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.dirs")
        .hasMessageContaining("floppy")
        .hasMessageContaining("nvme, ssd, hdd");
    assertThatThrownBy(() -> WorkerSettings.from(OPEN.with("faro.worker.dirs", "/data1")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.dirs")
        .hasMessageContaining("path:tier");
  }

  @Test
  void aDiskMayCarryACapacityAndABadOneNamesTheKeyAndTheForm() {
    assertThat(
            WorkerSettings.from(
                    MINIMAL.with("faro.worker.dirs", "/data1/faro:hdd:2t,/data2/faro:ssd"))
                .storage()
                .dirs())
        .containsExactly(
            new DiskDir(Path.of("/data1/faro"), DiskTier.HDD, 2L << 40),
            new DiskDir(Path.of("/data2/faro"), DiskTier.SSD));
    assertThatThrownBy(
            () -> WorkerSettings.from(MINIMAL.with("faro.worker.dirs", "/data1:hdd:lots")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.dirs")
        .hasMessageContaining("capacity 'lots' is not a size like 512m or 2t");
    assertThatThrownBy(
            () -> WorkerSettings.from(MINIMAL.with("faro.worker.dirs", "/data1:hdd:1t:x")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("path:tier or path:tier:capacity");
  }

  @Test
  void aBadSizeNamesTheKey() {
    assertThatThrownBy(
            () -> WorkerSettings.from(MINIMAL.with("faro.worker.flush.buffer.size", "lots")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.flush.buffer.size");
    assertThatThrownBy(() -> WorkerSettings.from(MINIMAL.with("faro.worker.chunk.size", "2g")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.chunk.size");
  }

  @Test
  void crossKeyChecksNameBothKeys() {
    assertThatThrownBy(() -> WorkerSettings.from(OPEN))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.dirs is not set");
    assertThatThrownBy(
            () -> WorkerSettings.from(MINIMAL.with("faro.worker.dirs", "/a:ssd,/a/:hdd")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("twice");
    assertThatThrownBy(
            () -> WorkerSettings.from(MINIMAL.with("faro.worker.memory.resume.percent", "95")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.memory.resume.percent")
        .hasMessageContaining("faro.worker.memory.pause.percent");
    assertThatThrownBy(() -> WorkerSettings.from(MINIMAL.with("faro.worker.chunk.size", "128m")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.network.max.frame.size");
    assertThatThrownBy(() -> WorkerSettings.from(MINIMAL.with("faro.worker.fetch.port", "9101")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.push.port")
        .hasMessageContaining("faro.worker.fetch.port");
    WorkerSettings ephemeral =
        WorkerSettings.from(
            MINIMAL
                .with("faro.worker.rpc.port", "0")
                .with("faro.worker.push.port", "0")
                .with("faro.worker.fetch.port", "0"));
    assertThat(ephemeral.ports().rpcPort()).isZero();
  }

  @Test
  void theMemoryBudgetFollowsTheJvmsDirectMemoryLimit() {
    long limit = 1L << 30;
    assertThat(MemorySizing.memoryBudget(0, limit)).isEqualTo(limit / 100 * 60);
    assertThat(MemorySizing.memoryBudget(256L << 20, limit)).isEqualTo(256L << 20);
    assertThatThrownBy(() -> MemorySizing.memoryBudget(limit, limit))
        .isInstanceOf(io.faro.common.config.ConfigException.class)
        .hasMessageContaining("faro.worker.memory.budget")
        .hasMessageContaining("-XX:MaxDirectMemorySize");
  }
}
