package io.faro.master.server;

import static io.faro.master.testing.Requests.registerApp;
import static io.faro.master.testing.Requests.registerWorker;
import static io.faro.master.testing.Requests.requestSlots;
import static io.faro.master.testing.Requests.shuffle;
import static io.faro.master.testing.Requests.unregisterShuffle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.common.testing.Eventually;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.master.testing.Requests;
import io.faro.proto.ClusterStatusResponse;
import io.faro.proto.RegisterWorkerResponse;
import io.faro.proto.RequestSlotsResponse;
import io.faro.proto.WorkerHeartbeatResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A master restarted on the same storage directory holds the same workers, apps and shuffles. */
class MasterRecoveryTest {
  @TempDir Path dir;

  @Test
  void restartReplaysTheLog() {
    FaroConf conf = MasterFixture.conf(dir);
    ClusterStatusResponse before;
    try (MasterFixture master = MasterFixture.start(conf)) {
      fill(master, 3, 2);
      master.call(unregisterShuffle(shuffle("app-1", 0)));
      before = master.status();
    }
    assertThat(files("snapshot.")).as("no snapshot: recovery must replay the log").isEmpty();

    try (MasterFixture master = MasterFixture.start(conf)) {
      ClusterStatusResponse after = master.status();

      assertThat(replicated(after)).isEqualTo(replicated(before));
      assertThat(after.getAppliedIndex()).isGreaterThan(before.getAppliedIndex());
      assertThat(
              master
                  .call(
                      Requests.heartbeat("w1", List.of(shuffle("app-1", 1))),
                      WorkerHeartbeatResponse.class)
                  .getExpiredShufflesList())
          .isEmpty();
    }
  }

  @Test
  void restartLoadsTheSnapshotAfterTheLogWasPurged() throws IOException {
    FaroConf conf =
        MasterFixture.conf(dir)
            .with(MasterServerOptions.SNAPSHOT_THRESHOLD, "4")
            .with(MasterServerOptions.RAFT_LOG_SEGMENT_SIZE, "16k");
    ClusterStatusResponse before;
    try (MasterFixture master = MasterFixture.start(conf)) {
      fill(master, 3, 12);
      Eventually.await(
          "a snapshot, and the first log segment purged",
          Duration.ofSeconds(10),
          () -> !files("snapshot.").isEmpty() && files("log_0-").isEmpty());
      // Entries after the snapshot are replayed on top of it.
      master.call(unregisterShuffle(shuffle("app-1", 3)));
      master.call(registerApp("app-2"));
      before = master.status();
    }
    assertThat(files("snapshot.")).anySatisfy(file -> assertThat(file.toString()).endsWith(".md5"));

    try (MasterFixture master = MasterFixture.start(conf)) {
      assertThat(replicated(master.status())).isEqualTo(replicated(before));
    }

    corruptNewestSnapshot();
    assertThatThrownBy(() -> MasterFixture.start(conf).close())
        .as("a snapshot that does not match its checksum is refused")
        .hasStackTraceContaining("MD5");
  }

  /** Three workers, one app and {@code shuffles} shuffles of 100 partitions. */
  private static void fill(MasterFixture master, int workers, int shuffles) {
    for (int i = 1; i <= workers; i++) {
      master.call(registerWorker("w" + i, 2), RegisterWorkerResponse.class);
    }
    master.call(registerApp("app-1"));
    for (int s = 0; s < shuffles; s++) {
      master.call(requestSlots(shuffle("app-1", s), 100), RequestSlotsResponse.class);
    }
  }

  /** The status without what is not replicated: heartbeat times and the applied index. */
  private static ClusterStatusResponse replicated(ClusterStatusResponse status) {
    ClusterStatusResponse.Builder b = status.toBuilder().clearAppliedIndex();
    b.getWorkersBuilderList().forEach(w -> w.clearLastHeartbeatMs());
    return b.build();
  }

  /** Files named {@code namePrefix*}; Ratis purges log segments meanwhile, so some may vanish. */
  private List<Path> files(String namePrefix) {
    List<Path> found = new java.util.ArrayList<>();
    try {
      Files.walkFileTree(
          dir,
          new java.nio.file.SimpleFileVisitor<>() {
            @Override
            public java.nio.file.FileVisitResult visitFile(
                Path file, java.nio.file.attribute.BasicFileAttributes attrs) {
              if (file.getFileName().toString().startsWith(namePrefix)) {
                found.add(file);
              }
              return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e)
                throws IOException {
              if (e instanceof java.nio.file.NoSuchFileException) {
                return java.nio.file.FileVisitResult.CONTINUE; // purged while we looked
              }
              throw e;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  private void corruptNewestSnapshot() throws IOException {
    Path newest =
        files("snapshot.").stream()
            .filter(p -> !p.toString().endsWith(".md5"))
            .max((a, b) -> Long.compare(index(a), index(b)))
            .orElseThrow();
    byte[] bytes = Files.readAllBytes(newest);
    bytes[bytes.length / 2] ^= 0x5a;
    Files.write(newest, bytes);
  }

  private static long index(Path snapshot) {
    String name = snapshot.getFileName().toString();
    return Long.parseLong(name.substring(name.indexOf('_') + 1));
  }
}
