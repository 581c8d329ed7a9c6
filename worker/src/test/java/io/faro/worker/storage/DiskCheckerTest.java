package io.faro.worker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.netty.buffer.Unpooled;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disk health on real directories: capacity and reserve, a directory that cannot be written, a hung
 * check.
 */
class DiskCheckerTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-disk"), 0);

  @TempDir Path root;

  @Test
  void aDiskIsFullOnceFaroFilesLeaveLessThanTheReserveOfItsCapacity() throws Exception {
    Path dir = Files.createDirectories(root.resolve("d0"));
    Files.write(dir.resolve("left-by-an-earlier-run"), new byte[100_000]);
    try (Disks disks =
        Disks.open(
            List.of(new DiskDir(dir, DiskTier.HDD, 1_000_000)), Disks.Options.buffered(1), "t")) {
      Disk disk = disks.get(0);
      assertThat(disk.usedBytes()).as("files found at start").isEqualTo(100_000);
      DiskChecker checker =
          new DiskChecker(
              disks,
              new DiskChecker.Settings(
                  reserves(700_000), Duration.ofHours(1), Duration.ofSeconds(30)),
              "t-check");
      checker.checkAll();
      assertThat(disk.health()).isEqualTo(new DiskHealth(DiskHealth.State.HEALTHY, 900_000, ""));

      PartitionFile file = disk.newPartitionFile(new PartitionKey(SHUFFLE, 0, 0));
      file.write(List.of(Unpooled.wrappedBuffer(new byte[300_000])));
      file.finish(ChunkIndex.of(new long[] {0, 300_000}), true);
      long footer = Files.size(file.path()) - 300_000;
      assertThat(disk.usedBytes()).isEqualTo(400_000 + footer);
      // Full at once, before any check: what was written since the last one is subtracted.
      assertThat(disk.health().state()).isEqualTo(DiskHealth.State.FULL);
      assertThat(disk.health().reason()).contains("since the last check");
      checker.checkAll();

      assertThat(disk.health().state()).isEqualTo(DiskHealth.State.FULL);
      assertThat(disk.health().usableBytes()).isEqualTo(600_000 - footer);
      assertThat(disk.health().describe())
          .contains(
              "below the reserve of 700000", "faro.worker.tier.hdd.reserve", "capacity 1000000");
      assertThat(disk.accepting()).isFalse();

      file.delete();
      assertThat(disk.usedBytes()).isEqualTo(100_000);
      checker.checkAll();
      assertThat(disk.accepting()).isTrue();
      // The check cleans up after itself.
      assertThat(dir.resolve(Disk.CHECK_FILE)).doesNotExist();
    }
  }

  @Test
  void partitionFilesOfAnEarlierRunAreDeletedAndNothingElse() throws Exception {
    Path dir = Files.createDirectories(root.resolve("d0"));
    Path leftover = FileLayout.partitionFile(dir, new PartitionKey(SHUFFLE, 3, 1));
    Files.createDirectories(leftover.getParent());
    Files.write(leftover, new byte[5000]);
    Path notOurs = Files.writeString(dir.resolve("README"), "someone else's");
    Path notAPartition = Files.writeString(leftover.getParent().resolve("notes.txt"), "kept");
    try (Disks disks =
        Disks.open(List.of(new DiskDir(dir, DiskTier.HDD)), Disks.Options.buffered(1), "t")) {
      long before = disks.get(0).usedBytes();
      disks.deleteLeftovers().get(10, TimeUnit.SECONDS);

      assertThat(leftover).doesNotExist();
      assertThat(notOurs).exists();
      assertThat(notAPartition).exists();
      assertThat(disks.get(0).usedBytes()).isEqualTo(before - 5000);
    }
  }

  @Test
  void aDiskWhoseDirectoryCannotBeWrittenIsBrokenUntilItCanAgain() throws Exception {
    Path dir = root.resolve("d0");
    try (Disks disks =
        Disks.open(List.of(new DiskDir(dir, DiskTier.SSD)), Disks.Options.buffered(1), "t")) {
      Disk disk = disks.get(0);
      assertThat(disk.check(0).state()).isEqualTo(DiskHealth.State.HEALTHY);

      // The directory is gone and a file sits in its place (as after a failed remount).
      Files.move(dir, root.resolve("d0-away"));
      Files.writeString(dir, "not a directory");
      DiskHealth broken = disk.check(0);
      assertThat(broken.state()).isEqualTo(DiskHealth.State.BROKEN);
      assertThat(broken.reason()).contains("could not write to " + dir);

      Files.delete(dir);
      Files.move(root.resolve("d0-away"), dir);
      assertThat(disk.check(0).state()).isEqualTo(DiskHealth.State.HEALTHY);

      disk.writeFailed("partition 3-0: No space left on device");
      assertThat(disk.health().describe())
          .isEqualTo("broken: a write failed: partition 3-0: No space left on device");
      assertThat(disk.check(0).healthy()).as("a failed write lasts until the next check").isTrue();
    }
  }

  @Test
  void aFailedWriteOfOneFileCostsItsDiskOneCheckAndABrokenDiskStaysBroken() throws Exception {
    Path dir = root.resolve("d0");
    try (Disks disks =
            Disks.open(List.of(new DiskDir(dir, DiskTier.SSD)), Disks.Options.buffered(1), "t");
        DiskChecker checker =
            new DiskChecker(
                disks,
                new DiskChecker.Settings(reserves(0), Duration.ofHours(1), Duration.ofSeconds(30)),
                "t-check")) {
      checker.start();
      Disk disk = disks.get(0);
      assertThat(disk.accepting()).isTrue();

      // One shuffle's directory cannot be made (a file sits where it goes): that partition's
      // file fails to write, the disk itself is fine.
      PartitionKey key = new PartitionKey(SHUFFLE, 5, 0);
      Path shuffleDir = FileLayout.partitionFile(dir, key).getParent();
      Files.createDirectories(shuffleDir.getParent());
      Files.writeString(shuffleDir, "in the way");
      PartitionFile file = disk.newPartitionFile(key);
      file.write(List.of(Unpooled.wrappedBuffer(new byte[4096])));
      assertThat(file.failure()).as("the write of that one file fails").isPresent();
      disk.writeFailed(key + ": " + file.failure().get().getMessage());
      // Broken at once; the check the failure asked for (the next scheduled one is an hour away)
      // finds the disk writable.
      awaitState(disk, DiskHealth.State.HEALTHY);

      // Now the whole directory goes: the check the next failure asks for keeps the disk broken.
      Files.move(dir, root.resolve("d0-away"));
      Files.writeString(dir, "not a directory");
      disk.writeFailed("partition 6-0: Input/output error");
      awaitState(disk, DiskHealth.State.BROKEN);
      awaitReason(disk, "the check could not write to " + dir);
    }
  }

  private static void awaitReason(Disk disk, String reason) {
    Eventually.await(
        "disk " + disk.index() + "'s health to give the reason " + reason,
        disk::health,
        health -> health.reason().contains(reason));
  }

  @Test
  void aDirectoryThatCannotBeCreatedAtStartMakesItsDiskBrokenUntilItIsFixed() throws Exception {
    Path dir = root.resolve("d0");
    Files.writeString(dir, "a file where the disk's directory should be");
    try (Disks disks =
        Disks.open(
            List.of(new DiskDir(dir, DiskTier.SSD), new DiskDir(root.resolve("d1"), DiskTier.SSD)),
            Disks.Options.buffered(1),
            "t")) {
      Disk disk = disks.get(0);
      assertThat(disk.health().describe())
          .isEqualTo("broken: cannot create " + dir + ": " + dir + " is a file, not a directory");
      assertThat(disks.get(1).accepting()).as("the other disk").isTrue();

      DiskHealth checked = disk.check(0);
      assertThat(checked.state()).isEqualTo(DiskHealth.State.BROKEN);
      assertThat(checked.reason())
          .isEqualTo(
              "the check could not write to " + dir + ": " + dir + " is a file, not a directory");

      Files.delete(dir);
      assertThat(disk.check(0).reason())
          .isEqualTo(
              "the check could not write to "
                  + dir
                  + ": "
                  + dir
                  + " does not exist (is its disk mounted?)");
      Files.createDirectory(dir);
      assertThat(disk.check(0).state())
          .as("fixed by the operator")
          .isEqualTo(DiskHealth.State.HEALTHY);
    }
  }

  @Test
  void aCheckThatHangsMakesItsDiskBrokenWhileTheOtherDisksAreStillChecked() throws Exception {
    Path d0 = root.resolve("d0");
    Path d1 = root.resolve("d1");
    try (Disks disks =
            Disks.open(
                List.of(new DiskDir(d0, DiskTier.SSD), new DiskDir(d1, DiskTier.SSD)),
                Disks.Options.buffered(1),
                "t");
        DiskChecker checker =
            new DiskChecker(
                disks,
                new DiskChecker.Settings(
                    reserves(0), Duration.ofMillis(50), Duration.ofMillis(300)),
                "t-check")) {
      // A named pipe where disk 0's check writes: opening it for writing blocks until someone
      // reads, as a write to a hung drive would.
      Path pipe = d0.resolve(Disk.CHECK_FILE);
      Process mkfifo = new ProcessBuilder("mkfifo", pipe.toString()).start();
      assertThat(mkfifo.waitFor(10, TimeUnit.SECONDS) && mkfifo.exitValue() == 0)
          .as("mkfifo")
          .isTrue();

      long start = System.nanoTime();
      checker.start();
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .as("start waits for a hung check only its timeout")
          .isLessThan(Duration.ofSeconds(5));
      awaitState(disks.get(0), DiskHealth.State.BROKEN);
      assertThat(disks.get(0).health().describe())
          .startsWith("broken: its check has not finished for");
      assertThat(disks.get(1).accepting()).isTrue();

      // Disk 1 turns bad while disk 0's check still hangs: its own checks notice.
      Files.move(d1, root.resolve("d1-away"));
      Files.writeString(d1, "not a directory");
      awaitState(disks.get(1), DiskHealth.State.BROKEN);
      Files.delete(d1);
      Files.move(root.resolve("d1-away"), d1);
      awaitState(disks.get(1), DiskHealth.State.HEALTHY);

      // Reading the pipe lets the blocked open go on; that check fails (a pipe cannot be forced)
      // and deletes the pipe, and the next one finds the disk healthy.
      try (FileInputStream reader = new FileInputStream(pipe.toFile())) {
        awaitState(disks.get(0), DiskHealth.State.HEALTHY);
      }
      assertThat(pipe).doesNotExist();
    }
  }

  /** Checks run on the checker's threads. */
  private static void awaitState(Disk disk, DiskHealth.State state) {
    Eventually.await(
        "disk " + disk.index() + " to be " + state,
        disk::health,
        health -> health.state() == state);
  }

  private static java.util.Map<DiskTier, Long> reserves(long bytes) {
    java.util.Map<DiskTier, Long> reserves = new java.util.EnumMap<>(DiskTier.class);
    for (DiskTier tier : DiskTier.values()) {
      reserves.put(tier, bytes);
    }
    return reserves;
  }
}
