package io.faro.worker.heartbeat;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskTierP;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerStateP;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.Reservation;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.Disks;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a worker tells the masters of its disks for disk-load-aware placement: each disk's tier and
 * recent write time per MiB, and the partition files it committed lately, on a real store over real
 * directories.
 */
class WorkerReportsTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-reports"), 0);
  private static final int MIB = 1 << 20;

  @TempDir Path root;
  private Disks disks;
  private PartitionStore store;
  private ScheduledExecutorService memoryThread;
  private MemoryBudget budget;
  private WorkerReports reports;

  @BeforeEach
  void setUp() {
    disks =
        Disks.open(
            List.of(
                new DiskDir(root.resolve("d0"), DiskTier.NVME),
                new DiskDir(root.resolve("d1"), DiskTier.HDD)),
            Disks.Options.buffered(1),
            "test");
    store = new PartitionStore(disks, new WriterSettings(256 * 1024, 8 * MIB));
    memoryThread = Executors.newSingleThreadScheduledExecutor();
    budget = new MemoryBudget(1L << 30, 1L << 29, () -> store.flushBuffered(), memoryThread);
    reports =
        new WorkerReports(
            new WorkerId("w"),
            new WorkerEndpoint("127.0.0.1", 1, 2, 3),
            disks,
            store,
            () -> WorkerStateP.SERVING,
            0);
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    store.close();
    disks.close();
    memoryThread.shutdownNow();
    memoryThread.awaitTermination(5, TimeUnit.SECONDS);
  }

  /** Reserves partition {@code p} on disk 0, pushes {@code bytes} to it and commits the shuffle. */
  private void writeAndCommit(int bytes) throws Exception {
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    for (int written = 0; written < bytes; written += 64 * 1024) {
      store.append(
          new PartitionKey(SHUFFLE, 0, 0),
          Unpooled.wrappedBuffer(new byte[64 * 1024]),
          new FrameCharge(budget, 64 * 1024, 1));
    }
    store.commit(SHUFFLE).get(30, TimeUnit.SECONDS);
  }

  @Test
  void aDiskThatWroteReportsItsTimePerMibAndOneThatDidNotReportsNone() throws Exception {
    WorkerHeartbeatRequest before = reports.heartbeat();
    assertThat(before.getDisksList())
        .extracting(DiskLoadP::getTier)
        .containsExactly(DiskTierP.NVME, DiskTierP.HDD);
    assertThat(before.getDisks(0).getFlushMsPerMib()).as("nothing written yet").isZero();

    writeAndCommit(3 * MIB);
    WorkerHeartbeatRequest after = reports.heartbeat();

    assertThat(after.getDisks(0).getFlushMsPerMib()).isPositive();
    assertThat(disks.get(0).reportedFlushMsPerMiB())
        .as("kept for the status RPC")
        .isEqualTo(after.getDisks(0).getFlushMsPerMib());
    assertThat(after.getDisks(1).getFlushMsPerMib()).as("the idle disk").isZero();
    assertThat(after.getRecentCommittedFiles()).isEqualTo(1);
    assertThat(after.getRecentCommittedBytes()).isEqualTo(3L * MIB);

    // Recent means the last few heartbeats: once they passed without writes, nothing is known.
    WorkerHeartbeatRequest later = after;
    for (int i = 0; i < WorkerReports.RECENT_HEARTBEATS; i++) {
      later = reports.heartbeat();
    }
    assertThat(later.getDisks(0).getFlushMsPerMib()).isZero();
    assertThat(later.getRecentCommittedFiles()).isZero();
  }

  @Test
  void aSlowedDiskReportsTheDelayInItsWriteTime() throws Exception {
    Disk disk = disks.get(0);
    disk.writeDelay(() -> TimeUnit.MILLISECONDS.toNanos(40)); // as a worker extension asks
    disk.check(0); // the delay is asked for at each check
    reports.heartbeat();

    writeAndCommit(2 * MIB);

    assertThat(reports.heartbeat().getDisks(0).getFlushMsPerMib()).isGreaterThanOrEqualTo(40);
  }

  @Test
  void timesNeedAMibToMeanAnything() {
    assertThat(WorkerReports.msPerMiB(MIB - 1, 1_000_000_000L)).isZero();
    assertThat(WorkerReports.msPerMiB(2L * MIB, 10_000_000L)).isEqualTo(5.0);
  }
}
