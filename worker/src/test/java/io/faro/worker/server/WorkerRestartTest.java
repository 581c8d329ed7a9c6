package io.faro.worker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.testing.Eventually;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.WorkerMetaVersionP;
import io.faro.worker.meta.WorkerMetaStore;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.PartitionFileFormat;
import io.faro.worker.testing.Batches;
import io.faro.worker.testing.FakeMaster;
import io.faro.worker.testing.TestWorkers;
import io.faro.worker.testing.WorkerClient;
import io.faro.worker.testing.WorkerClient.Part;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * A worker restarted on the same disks serves again what its earlier run committed, and only what
 * passes its check: real workers, a real RocksDB store, real files.
 */
class WorkerRestartTest {
  private static final ShuffleId COMMITTED = new ShuffleId(new AppId("app-restart"), 0);
  private static final ShuffleId OPEN = new ShuffleId(new AppId("app-restart"), 1);

  @TempDir Path tmp;

  private FaroConf conf(FakeMaster master) {
    return TestWorkers.conf(master.endpoint(), tmp.resolve("d0"), tmp.resolve("d1"))
        .with("faro.worker.id", "worker-restart")
        // Restarts of partition files; d1 is an HDD, which keeps runs by default
        // (WorkerRunsLayoutTest restarts those).
        .with("faro.worker.tier.hdd.layout", "files");
  }

  /** Pushes {@code batches} batches to each of partitions 0 and 1 of {@code shuffle}. */
  private static void push(WorkerClient client, ShuffleId shuffle, int batches) {
    Batches b = new Batches(true, 7);
    for (int i = 0; i < batches; i++) {
      List<Part> parts = new ArrayList<>();
      for (int p = 0; p < 2; p++) {
        parts.add(new Part(p, 0, b.batchBytes(0, 0, i * 2 + p, 3000)));
      }
      client.push(shuffle, parts);
    }
  }

  private static PartitionKey key(ShuffleId shuffle, int partition) {
    return new PartitionKey(shuffle, partition, 0);
  }

  /** Runs a worker, commits COMMITTED (partitions 0 on disk 0, 1 on disk 1), leaves OPEN open. */
  private List<byte[]> firstRun(FakeMaster master) {
    try (WorkerServer worker = new WorkerServer(conf(master))) {
      worker.start();
      try (WorkerClient client = new WorkerClient("first", worker.endpoint())) {
        client.reserve(COMMITTED, 0, 0, 0);
        client.reserve(COMMITTED, 0, 1, 1);
        client.reserve(OPEN, 0, 0, 0);
        push(client, COMMITTED, 20);
        push(client, OPEN, 5);
        assertThat(client.commit(COMMITTED).getCommittedCount()).isEqualTo(2);
        return List.of(client.fetchAll(key(COMMITTED, 0)), client.fetchAll(key(COMMITTED, 1)));
      }
    }
  }

  private Path file(int disk, PartitionKey key) {
    return FileLayout.partitionFile(tmp.resolve("d" + disk), key);
  }

  @Test
  void committedDataIsServedAgainAfterARestartAndWhatWasNotCommittedIsGone() {
    try (FakeMaster master = new FakeMaster()) {
      List<byte[]> before = firstRun(master);
      assertThat(before.get(0)).hasSizeGreaterThan(16 * 1024); // more than one chunk
      assertThat(file(0, key(OPEN, 0))).exists();

      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          assertThat(client.fetchAll(key(COMMITTED, 0))).isEqualTo(before.get(0));
          assertThat(client.fetchAll(key(COMMITTED, 1))).isEqualTo(before.get(1));
          // A commit asked again (a lifecycle manager that did not hear the answer) answers it.
          assertThat(client.commit(COMMITTED).getCommittedCount()).isEqualTo(2);
          assertThatThrownBy(() -> client.fetchAll(key(OPEN, 0)))
              .isInstanceOfSatisfying(
                  FaroException.class,
                  e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION));
          Eventually.await(
              "the uncommitted shuffle's file to be deleted",
              () -> !Files.exists(file(0, key(OPEN, 0))));
          // The heartbeats list the restored shuffle, so the masters can expire it.
          Eventually.await(
              "a heartbeat listing the restored shuffle",
              () ->
                  master.lastHeartbeat("worker-restart") != null
                      && master.lastHeartbeat("worker-restart").getShufflesCount() == 1);

          // Expired: its files go, and the store forgets it.
          master.expire(COMMITTED);
          Eventually.await(
              "the expired shuffle's files to be deleted",
              () ->
                  !Files.exists(file(0, key(COMMITTED, 0)))
                      && !Files.exists(file(1, key(COMMITTED, 1))));
        }
      }
      try (WorkerServer third = new WorkerServer(conf(master))) {
        third.start();
        try (WorkerClient client = new WorkerClient("third", third.endpoint())) {
          assertThatThrownBy(() -> client.fetchAll(key(COMMITTED, 0)))
              .isInstanceOf(FaroException.class);
        }
      }
    }
  }

  @Test
  void emptyLocationsAreOneRecordOfTheShuffleAndAnsweredAgainAfterARestart() throws IOException {
    ShuffleId wide = new ShuffleId(new AppId("app-restart"), 2);
    int locations = 1_000;
    int[] all = IntStream.range(0, locations).toArray();
    try (FakeMaster master = new FakeMaster()) {
      try (WorkerServer worker = new WorkerServer(conf(master))) {
        worker.start();
        try (WorkerClient client = new WorkerClient("first", worker.endpoint())) {
          client.reserve(wide, 0, 0, all);
          push(client, wide, 3); // partitions 0 and 1 only
          CommitFilesResponse asked = client.commitAsking(wide, 0, 0, 5, 0, 2_000, 0);
          assertThat(asked.getCommittedList())
              .extracting(c -> c.getPartitionId() + ":" + (c.getBytes() > 0 ? "data" : "empty"))
              .as("the locations asked that it holds, no other")
              .containsExactly("0:data", "5:empty");
          assertThat(client.commit(wide).getCommittedCount()).isEqualTo(locations);
        }
      }
      // The store holds a record for each of the two locations with data, and the empty ones in
      // the shuffle's own record.
      try (WorkerMetaStore meta =
          WorkerMetaStore.open(tmp.resolve("d0").resolve(".faro-meta"), "worker-restart")) {
        WorkerMetaStore.StoredShuffle stored =
            meta.shuffles().stream()
                .filter(x -> x.shuffle().equals(wide))
                .findFirst()
                .orElseThrow();
        assertThat(stored.partitions()).hasSize(2);
        assertThat(stored.emptyLocations()).hasSize(locations - 2);
      }

      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          CommitFilesResponse answer = client.commit(wide);
          assertThat(answer.getCommittedCount()).isEqualTo(locations);
          assertThat(answer.getCommittedList().stream().filter(c -> c.getBytes() > 0))
              .extracting(c -> c.getPartitionId())
              .containsExactlyInAnyOrder(0, 1);
          assertThat(client.commitAsking(wide, 1, 0, 999, 0, 1_000, 0).getCommittedList())
              .extracting(c -> c.getPartitionId() + ":" + (c.getBytes() > 0 ? "data" : "empty"))
              .containsExactly("1:data", "999:empty");
        }
      }
    }
  }

  @Test
  void aTruncatedOrCorruptedFileIsDroppedAtStartAndNeverServed() throws IOException {
    try (FakeMaster master = new FakeMaster()) {
      List<byte[]> before = firstRun(master);
      // Partition 0's file loses its last bytes (its trailer); partition 1's index is overwritten.
      Path truncated = file(0, key(COMMITTED, 0));
      try (RandomAccessFile f = new RandomAccessFile(truncated.toFile(), "rw")) {
        f.setLength(f.length() - 10);
      }
      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          assertThatThrownBy(() -> client.fetchAll(key(COMMITTED, 0)))
              .isInstanceOfSatisfying(
                  FaroException.class,
                  e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION));
          assertThat(client.fetchAll(key(COMMITTED, 1))).isEqualTo(before.get(1));
          Eventually.await("the truncated file to be deleted", () -> !Files.exists(truncated));
        }
      }
      // The index of partition 1 no longer matches its CRC: dropped at the next start.
      Path corrupted = file(1, key(COMMITTED, 1));
      try (RandomAccessFile f = new RandomAccessFile(corrupted.toFile(), "rw")) {
        long indexByte = f.length() - 24 - 4;
        f.seek(indexByte);
        int b = f.read();
        f.seek(indexByte);
        f.write(b ^ 0xff);
      }
      try (WorkerServer third = new WorkerServer(conf(master))) {
        third.start();
        try (WorkerClient client = new WorkerClient("third", third.endpoint())) {
          assertThatThrownBy(() -> client.fetchAll(key(COMMITTED, 1)))
              .isInstanceOf(FaroException.class);
          Eventually.await("the corrupted file to be deleted", () -> !Files.exists(corrupted));
        }
      }
    }
  }

  @Test
  void aStoreThatCannotBeReadIsMovedAsideAndRebuiltFromTheFilesTrailers() throws IOException {
    try (FakeMaster master = new FakeMaster()) {
      List<byte[]> before = firstRun(master);
      Path store = tmp.resolve("d0").resolve(".faro-meta");
      try (Stream<Path> files = Files.list(store)) {
        for (Path f : files.toList()) {
          if (f.getFileName().toString().startsWith("MANIFEST")) {
            Files.write(f, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
          }
        }
      }
      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          // The committed files carry their own trailers and indexes: served again.
          assertThat(client.fetchAll(key(COMMITTED, 0))).isEqualTo(before.get(0));
          assertThat(client.fetchAll(key(COMMITTED, 1))).isEqualTo(before.get(1));
          // The open shuffle's file has no trailer: never committed, deleted.
          assertThatThrownBy(() -> client.fetchAll(key(OPEN, 0))).isInstanceOf(FaroException.class);
          Eventually.await(
              "the uncommitted file to be deleted", () -> !Files.exists(file(0, key(OPEN, 0))));
        }
        try (Stream<Path> siblings = Files.list(tmp.resolve("d0"))) {
          assertThat(siblings.map(p -> p.getFileName().toString()))
              .anyMatch(n -> n.startsWith(".faro-meta.unreadable-"));
        }
      }
    }
  }

  @Test
  void aStoreThatIsGoneIsRebuiltAndAFileWithoutItsTrailerIsNotServed() throws IOException {
    try (FakeMaster master = new FakeMaster()) {
      List<byte[]> before = firstRun(master);
      deleteRecursively(tmp.resolve("d0").resolve(".faro-meta"));
      // Partition 1's trailer is gone too: without it nothing says the file is whole.
      Path truncated = file(1, key(COMMITTED, 1));
      try (RandomAccessFile f = new RandomAccessFile(truncated.toFile(), "rw")) {
        f.setLength(f.length() - 3);
      }
      try (WorkerServer again = new WorkerServer(conf(master))) {
        again.start();
        try (WorkerClient client = new WorkerClient("again", again.endpoint())) {
          assertThat(client.fetchAll(key(COMMITTED, 0))).isEqualTo(before.get(0));
          assertThatThrownBy(() -> client.fetchAll(key(COMMITTED, 1)))
              .isInstanceOf(FaroException.class);
          Eventually.await(
              "the file without a trailer to be deleted", () -> !Files.exists(truncated));
        }
      }
    }
  }

  private static void deleteRecursively(Path root) throws IOException {
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  @Test
  void aStoreOfANewerFaroStopsTheStartAndIsLeftAsItIs() throws Exception {
    try (FakeMaster master = new FakeMaster()) {
      firstRun(master);
      Path store = tmp.resolve("d0").resolve(".faro-meta");
      try (Options options = new Options();
          RocksDB db = RocksDB.open(options, store.toString())) {
        db.put(
            new byte[] {'v'}, WorkerMetaVersionP.newBuilder().setVersion(99).build().toByteArray());
      }
      WorkerServer newer = new WorkerServer(conf(master));
      assertThatThrownBy(newer::start)
          .isInstanceOf(FaroException.class)
          .hasMessageContaining("version 99")
          .hasMessageContaining("newer");
      assertThat(file(0, key(COMMITTED, 0))).as("nothing deleted").exists();
      assertThat(file(1, key(COMMITTED, 1))).exists();
    }
  }

  @Test
  void aCommittedFileOfANewerFormatStopsTheStartWhetherTheStoreListsItOrNot() throws Exception {
    try (FakeMaster master = new FakeMaster()) {
      firstRun(master);
      // A newer Faro's committed file: a whole trailer, but a format version this one cannot read.
      Path newer = file(1, key(COMMITTED, 1));
      try (RandomAccessFile f = new RandomAccessFile(newer.toFile(), "rw")) {
        f.seek(f.length() - PartitionFileFormat.TRAILER_SIZE + PartitionFileFormat.TRAILER_VERSION);
        f.writeInt(PartitionFileFormat.VERSION + 1);
      }
      byte[] bytes = Files.readAllBytes(newer);

      assertThatThrownBy(() -> new WorkerServer(conf(master)).start())
          .as("listed in the store")
          .isInstanceOf(FaroException.class)
          .hasMessageContaining("format version " + (PartitionFileFormat.VERSION + 1))
          .hasMessageContaining("newer");
      // Lost store: the rebuild from the files' trailers must not take it for garbage either.
      deleteRecursively(tmp.resolve("d0").resolve(".faro-meta"));
      for (int attempt = 1; attempt <= 2; attempt++) {
        assertThatThrownBy(() -> new WorkerServer(conf(master)).start())
            .as("found while rebuilding a lost store, start %d", attempt)
            .isInstanceOf(FaroException.class)
            .hasMessageContaining("newer");
      }

      assertThat(Files.readAllBytes(newer)).as("the newer file, untouched").isEqualTo(bytes);
      assertThat(file(0, key(COMMITTED, 0))).as("nothing else deleted either").exists();
    }
  }
}
