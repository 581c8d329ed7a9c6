package io.faro.worker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.ConfigException;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.faro.worker.WorkerSettings;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker whose disks use the runs layout: what reducers fetch is byte for byte what was pushed,
 * the disks hold a few runs and no file per partition, and a restart serves the committed runs
 * again, dropping only locations whose runs were damaged. Real workers, RocksDB and files.
 */
class WorkerRunsLayoutTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-runs"), 3);
  private static final int PARTITIONS = 24;
  private static final int ROUNDS = 40;

  @TempDir Path tmp;

  private FaroConf conf(FakeMaster master) {
    return TestWorkers.conf(master.endpoint(), tmp.resolve("d0"), tmp.resolve("d1"))
        .with("faro.worker.id", "worker-runs")
        .with("faro.worker.tier.ssd.layout", "runs")
        .with("faro.worker.tier.hdd.layout", "runs")
        .with("faro.worker.runs.bytes", "1m")
        .with("faro.worker.runs.read.around", "256k");
  }

  /**
   * Pushes ROUNDS frames, each with a part for every partition (partitions in a shuffled order per
   * frame), and returns what each partition received, in order.
   */
  private static List<byte[]> push(WorkerClient client) {
    Batches b = new Batches(false, 11);
    List<ByteArrayOutputStream> expected = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      expected.add(new ByteArrayOutputStream());
    }
    for (int round = 0; round < ROUNDS; round++) {
      List<Integer> order = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        order.add(p);
      }
      java.util.Collections.shuffle(order, b.random());
      List<Part> parts = new ArrayList<>();
      for (int p : order) {
        byte[] bytes = b.batchBytes(round, 0, p, 2000 + b.random().nextInt(6000));
        expected.get(p).writeBytes(bytes);
        parts.add(new Part(p, 0, bytes));
      }
      client.push(SHUFFLE, parts);
    }
    return expected.stream().map(ByteArrayOutputStream::toByteArray).toList();
  }

  /**
   * Reserves every partition (even ones on disk 0, odd ones on disk 1), pushes (see {@link #push})
   * and commits; returns what each partition received.
   */
  private static List<byte[]> reservePushAndCommit(WorkerClient client) {
    for (int p = 0; p < PARTITIONS; p++) {
      client.reserve(SHUFFLE, 0, p % 2, p);
    }
    List<byte[]> expected = push(client);
    assertThat(client.commit(SHUFFLE).getCommittedCount()).isEqualTo(PARTITIONS);
    return expected;
  }

  private static PartitionKey key(int partition) {
    return new PartitionKey(SHUFFLE, partition, 0);
  }

  private List<Path> runs(int disk) throws IOException {
    Path dir = FileLayout.shuffleDir(tmp.resolve("d" + disk), SHUFFLE);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.sorted().toList();
    }
  }

  @Test
  void pushedDataIsFetchedFromRunsAndServedAgainAfterARestart() throws IOException {
    try (FakeMaster master = new FakeMaster()) {
      List<byte[]> expected;
      try (WorkerServer worker = new WorkerServer(conf(master))) {
        worker.start();
        try (WorkerClient client = new WorkerClient("runs", worker.endpoint())) {
          expected = reservePushAndCommit(client);
          for (int p = 0; p < PARTITIONS; p++) {
            assertThat(client.openStream(key(p)).size())
                .as("partition %d has several chunks", p)
                .isGreaterThan(2);
            assertThat(client.fetchAll(key(p))).as("partition %d", p).isEqualTo(expected.get(p));
          }
        }
      }
      // About 2.4 MB per disk: two runs of 1 MiB and the commit's last run, and the commit's run
      // index; no partition files.
      for (int disk = 0; disk < 2; disk++) {
        List<Path> files = runs(disk);
        assertThat(files.stream().filter(f -> FileLayout.runNumber(f) >= 0))
            .as("disk %d's runs", disk)
            .hasSizeBetween(3, 4);
        assertThat(files.stream().filter(FileLayout::isRunIndex))
            .as("disk %d's run index, written at the commit", disk)
            .hasSize(1);
        assertThat(files)
            .hasSize((int) files.stream().filter(f -> FileLayout.runNumber(f) >= 0).count() + 1);
      }

      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          for (int p = 0; p < PARTITIONS; p++) {
            assertThat(client.fetchAll(key(p))).as("partition %d", p).isEqualTo(expected.get(p));
          }
          assertThat(client.commit(SHUFFLE).getCommittedCount()).isEqualTo(PARTITIONS);
        }
      }

      // Disk 1's last run loses its end: the odd partitions (each has bytes near the end of the
      // last run there, the one of the highest partition for sure) may not be served whole.
      List<Path> disk1 = runs(1);
      Path last =
          disk1.stream().max(java.util.Comparator.comparingInt(FileLayout::runNumber)).get();
      try (RandomAccessFile f = new RandomAccessFile(last.toFile(), "rw")) {
        f.setLength(f.length() - 100);
      }
      try (WorkerServer third = new WorkerServer(conf(master))) {
        third.start();
        try (WorkerClient client = new WorkerClient("third", third.endpoint())) {
          for (int p = 0; p < PARTITIONS; p += 2) {
            assertThat(client.fetchAll(key(p))).as("partition %d", p).isEqualTo(expected.get(p));
          }
          assertThatThrownBy(() -> client.fetchAll(key(PARTITIONS - 1)))
              .isInstanceOfSatisfying(
                  FaroException.class,
                  e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION));
          // Whatever is still served is whole.
          for (int p = 1; p < PARTITIONS; p += 2) {
            try {
              assertThat(client.fetchAll(key(p))).isEqualTo(expected.get(p));
            } catch (FaroException e) {
              assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION);
            }
          }
          Eventually.await(
              "a heartbeat listing the restored shuffle",
              () ->
                  master.lastHeartbeat("worker-runs") != null
                      && master.lastHeartbeat("worker-runs").getShufflesCount() == 1);
          master.expire(SHUFFLE);
          Eventually.await(
              "the expired shuffle's runs to be deleted",
              () ->
                  !Files.exists(FileLayout.shuffleDir(tmp.resolve("d0"), SHUFFLE))
                      && !Files.exists(FileLayout.shuffleDir(tmp.resolve("d1"), SHUFFLE)));
        }
      }
    }
  }

  @Test
  void aLostStoreIsRebuiltFromTheRunIndexesAndADamagedIndexServesNothing() throws IOException {
    try (FakeMaster master = new FakeMaster()) {
      List<byte[]> expected;
      try (WorkerServer worker = new WorkerServer(conf(master))) {
        worker.start();
        try (WorkerClient client = new WorkerClient("runs", worker.endpoint())) {
          expected = reservePushAndCommit(client);
        }
      }
      // One index per disk, next to its runs; disk 1's loses a byte.
      List<Path> indexes = new ArrayList<>();
      for (int disk = 0; disk < 2; disk++) {
        runs(disk).stream().filter(FileLayout::isRunIndex).forEach(indexes::add);
      }
      assertThat(indexes).hasSize(2);
      Path damaged =
          indexes.stream().filter(f -> f.startsWith(tmp.resolve("d1"))).findFirst().get();
      try (RandomAccessFile f = new RandomAccessFile(damaged.toFile(), "rw")) {
        f.seek(10);
        int b = f.read();
        f.seek(10);
        f.write(b ^ 0xFF);
      }
      deleteRecursively(tmp.resolve("d0").resolve(".faro-meta"));

      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          assertServesOnly(client, expected, 0, "listed only in the damaged index");
        }
      }
    }
  }

  @Test
  void aRebuildNeverServesARunNewerThanTheIndexThatListsIt() throws IOException {
    try (FakeMaster master = new FakeMaster()) {
      List<byte[]> expected;
      try (WorkerServer worker = new WorkerServer(conf(master))) {
        worker.start();
        try (WorkerClient client = new WorkerClient("runs", worker.endpoint())) {
          expected = reservePushAndCommit(client);
        }
      }
      // Disk 0's last run (which holds every even partition's last bytes) stands for a run of
      // the same name written after its index: a run number taken again.
      Path index0 = runs(0).stream().filter(FileLayout::isRunIndex).findFirst().orElseThrow();
      Path last =
          runs(0).stream()
              .filter(f -> FileLayout.runNumber(f) >= 0)
              .max(java.util.Comparator.comparingInt(FileLayout::runNumber))
              .orElseThrow();
      Files.setLastModifiedTime(
          last,
          java.nio.file.attribute.FileTime.fromMillis(
              Files.getLastModifiedTime(index0).toMillis() + 60_000));
      deleteRecursively(tmp.resolve("d0").resolve(".faro-meta"));

      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          assertServesOnly(client, expected, 1, "with data in the newer run");
        }
      }
    }
  }

  /**
   * The partitions of one {@code parity} (0: even, 1: odd) are served whole; the others are unknown
   * to the worker ({@code why}).
   */
  private static void assertServesOnly(
      WorkerClient client, List<byte[]> expected, int parity, String why) {
    for (int p = 0; p < PARTITIONS; p++) {
      int partition = p;
      if (p % 2 == parity) {
        assertThat(client.fetchAll(key(p))).as("partition %d", p).isEqualTo(expected.get(p));
      } else {
        assertThatThrownBy(() -> client.fetchAll(key(partition)))
            .as("partition %d, %s", p, why)
            .isInstanceOfSatisfying(
                FaroException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION));
      }
    }
  }

  private static void deleteRecursively(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  @Test
  void runsWithDirectIoAreRefusedNamingTheKeys() {
    FaroConf conf =
        TestWorkers.conf("127.0.0.1:1", tmp.resolve("d0"))
            .with("faro.worker.tier.ssd.layout", "runs")
            .with("faro.worker.io.mode", "direct");
    assertThatThrownBy(() -> WorkerSettings.from(conf))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.tier.ssd.layout")
        .hasMessageContaining("faro.worker.io.mode");
    assertThatThrownBy(
            () ->
                WorkerSettings.from(
                    TestWorkers.conf("127.0.0.1:1", tmp.resolve("d0"))
                        .with("faro.worker.tier.ssd.layout", "sorted")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("faro.worker.tier.ssd.layout")
        .hasMessageContaining("runs");
  }
}
