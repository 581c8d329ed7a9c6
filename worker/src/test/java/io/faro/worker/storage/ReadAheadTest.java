package io.faro.worker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which files a shuffle's read-ahead names as reducers fetch it: those after the frontier. */
class ReadAheadTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-ahead"), 1);
  private static final long UNLIMITED = Long.MAX_VALUE;

  private final DiskReader reader = new DiskReader("test-reader", null, 1, 2L << 20, 1000);

  @AfterEach
  void close() {
    reader.close();
  }

  @Test
  void eachFetchNamesTheFilesAfterTheHighestPartitionFetchedNotNamedBefore() {
    // Partitions 0, 2, 4, ... 18 are here (the others on other workers), in no order.
    List<ReadAhead.Target> targets = new ArrayList<>();
    for (int p = 18; p >= 0; p -= 2) {
      targets.add(target(p, 0, 100));
    }
    ReadAhead plan = new ReadAhead(targets);
    assertThat(plan.size()).isEqualTo(10);

    assertThat(partitions(plan.next(key(0, 0), 3, UNLIMITED))).containsExactly(2, 4, 6);
    // The next reducers' fetches move the frontier: only what is newly within reach is named.
    assertThat(partitions(plan.next(key(2, 0), 3, UNLIMITED))).containsExactly(8);
    assertThat(partitions(plan.next(key(6, 0), 3, UNLIMITED))).containsExactly(10, 12);
    // A fetch behind the frontier (a retried task), or of the frontier again, moves nothing.
    assertThat(plan.next(key(4, 0), 3, UNLIMITED)).isEmpty();
    assertThat(plan.next(key(6, 0), 3, UNLIMITED)).isEmpty();
    // Far ahead (many tasks at once on a cluster): the files after it, none skipped twice.
    assertThat(partitions(plan.next(key(14, 0), 3, UNLIMITED))).containsExactly(16, 18);
    assertThat(plan.next(key(18, 0), 3, UNLIMITED)).isEmpty();
  }

  @Test
  void aPartitionNotInThePlanMovesNothing() {
    ReadAhead plan = new ReadAhead(List.of(target(0, 0, 10), target(1, 0, 10), target(2, 0, 10)));
    // Partition 1's replica epoch, and a partition of another worker: not here as primaries.
    assertThat(plan.next(key(1, 1), 5, UNLIMITED)).isEmpty();
    assertThat(plan.next(key(7, 0), 5, UNLIMITED)).isEmpty();
    assertThat(partitions(plan.next(key(0, 0), 5, UNLIMITED))).containsExactly(1, 2);
  }

  @Test
  void theBytesBeyondTheFrontierStayWithinTheLimitAndEveryEpochIsAFile() {
    ReadAhead plan =
        new ReadAhead(
            List.of(
                target(0, 0, 50),
                target(1, 0, 40),
                target(1, 2, 40),
                target(2, 0, 30),
                target(3, 0, 500),
                target(4, 0, 10)));

    List<ReadAhead.Target> first = plan.next(key(0, 0), 10, 110);
    assertThat(first).extracting(t -> t.key().epoch()).containsExactly(0, 2, 0);
    assertThat(partitions(first)).containsExactly(1, 1, 2);
    // Partition 3 alone is over the limit: nothing more until the frontier passes it.
    assertThat(plan.next(key(1, 0), 10, 110)).isEmpty();
    assertThat(plan.next(key(2, 0), 10, 110)).isEmpty();
    assertThat(partitions(plan.next(key(3, 0), 10, 110))).containsExactly(4);
  }

  @Test
  void filesOnADiskWithDirectIoMoveTheFrontierButAreNeitherNamedNorCounted(@TempDir Path dir) {
    DirectIo.Probe probe = DirectIo.probe(dir);
    // ext4, xfs and tmpfs (Linux 6.6+) take O_DIRECT; DirectIoTest fails where they do not.
    assumeThat(probe.supported()).as("O_DIRECT in %s", dir).isTrue();
    try (DiskReader direct = new DiskReader("test-direct", probe.io(), 1, 2L << 20, 1000)) {
      // Even partitions on the page-cache disk, odd ones on the direct one.
      List<ReadAhead.Target> targets = new ArrayList<>();
      for (int p = 0; p < 8; p++) {
        targets.add(
            new ReadAhead.Target(key(p, 0), Path.of("p" + p), 100, p % 2 == 0 ? reader : direct));
      }
      ReadAhead plan = new ReadAhead(targets);

      assertThat(partitions(plan.next(key(0, 0), 2, 200))).containsExactly(2, 4);
      // Fetching partition 3 (direct) moves the frontier past 2 all the same.
      assertThat(partitions(plan.next(key(3, 0), 2, 200))).containsExactly(6);
    }
  }

  private ReadAhead.Target target(int partition, int epoch, long bytes) {
    return new ReadAhead.Target(
        key(partition, epoch), Path.of("p" + partition + "e" + epoch), bytes, reader);
  }

  private static PartitionKey key(int partition, int epoch) {
    return new PartitionKey(SHUFFLE, partition, epoch);
  }

  private static List<Integer> partitions(List<ReadAhead.Target> targets) {
    return targets.stream().map(t -> t.key().partition()).toList();
  }
}
