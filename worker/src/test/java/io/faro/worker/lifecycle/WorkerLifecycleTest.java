package io.faro.worker.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.testing.Eventually;
import io.faro.worker.partition.CommitLog;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.Reservation;
import io.faro.worker.partition.SealReport;
import io.faro.worker.partition.ShuffleCommit;
import io.faro.worker.partition.WriterSettings;
import io.faro.worker.storage.DiskDir;
import io.faro.worker.storage.Disks;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transitions of a worker's lifecycle, driven heartbeat by heartbeat as the heartbeat thread
 * drives them, on a real store over real disks: when a drain ends, what cancels it, when the worker
 * asks to exit, and what a stop after a drain does.
 */
class WorkerLifecycleTest {
  private static final ShuffleId SHUFFLE = new ShuffleId(new AppId("app-lifecycle"), 0);
  private static final Duration DRAIN_TIMEOUT = Duration.ofHours(1);

  @TempDir Path root;
  private Disks disks;
  private PartitionStore store;
  private final AtomicInteger announced = new AtomicInteger();
  private final AtomicInteger exits = new AtomicInteger();
  // The locations of the latest sealed record.
  private final AtomicInteger sealedRecorded = new AtomicInteger();
  private Instant now = Instant.parse("2026-11-26T12:00:00Z");
  private WorkerLifecycle lifecycle;

  @BeforeEach
  void setUp() {
    disks =
        Disks.open(
            List.of(new DiskDir(root.resolve("d0"), DiskTier.SSD)),
            Disks.Options.buffered(1),
            "test");
    store = new PartitionStore(disks, new WriterSettings(8 * 1024, 16 * 1024));
    store.recordCommitsIn(
        new CommitLog() {
          @Override
          public void committed(
              ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit commit) {}

          @Override
          public void sealed(
              ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit sealed) {
            sealedRecorded.set(sealed.locations());
          }

          @Override
          public void forgotten(ShuffleId shuffle) {}
        });
    Clock clock =
        new Clock() {
          @Override
          public ZoneOffset getZone() {
            return ZoneOffset.UTC;
          }

          @Override
          public Clock withZone(java.time.ZoneId zone) {
            return this;
          }

          @Override
          public Instant instant() {
            return now;
          }
        };
    lifecycle =
        new WorkerLifecycle(
            new WorkerId("w-lifecycle"),
            store,
            Duration.ofSeconds(30),
            DRAIN_TIMEOUT,
            clock,
            () -> {
              announced.incrementAndGet();
              return true;
            },
            exits::incrementAndGet);
  }

  @AfterEach
  void tearDown() {
    store.close();
    disks.close();
  }

  /** One heartbeat round whose leader says {@code decommission}. */
  private void heartbeat(boolean decommission) {
    lifecycle.decommissioning(decommission);
    lifecycle.afterHeartbeat(true);
  }

  private void awaitState(WorkerLifecycle.State state, boolean decommission) {
    Eventually.await(
        "the worker " + state,
        () -> {
          heartbeat(decommission);
          return lifecycle.state() == state;
        });
  }

  @Test
  void anIncludeThatArrivesAfterTheWorkerDrainedTurnsItBackInsteadOfLettingItExit() {
    awaitState(WorkerLifecycle.State.DRAINED, true);
    assertThatThrownBy(() -> store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0))))
        .isInstanceOfSatisfying(
            FaroException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SHUTTING_DOWN));

    // The leader recorded an include-worker before the DRAINED report: it says no decommission.
    heartbeat(false);

    assertThat(lifecycle.state()).isEqualTo(WorkerLifecycle.State.SERVING);
    assertThat(exits).hasValue(0);
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
  }

  @Test
  void aDrainedWorkerExitsOnceALeaderConfirmsOrAfterThreeRoundsWithoutOne() {
    awaitState(WorkerLifecycle.State.DRAINED, true);
    lifecycle.afterHeartbeat(false);
    lifecycle.afterHeartbeat(false);
    assertThat(exits).as("two rounds without a leader").hasValue(0);
    lifecycle.afterHeartbeat(false);
    assertThat(exits).as("the third").hasValue(1);
    heartbeat(true);
    assertThat(exits).as("asked once").hasValue(1);
  }

  @Test
  void aDrainEndsWhenItsTimeoutPassesWithShufflesStillHeld() {
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    heartbeat(true);
    assertThat(lifecycle.state()).isEqualTo(WorkerLifecycle.State.DRAINING);
    heartbeat(true);
    assertThat(lifecycle.state()).as("a shuffle is held").isEqualTo(WorkerLifecycle.State.DRAINING);

    now = now.plus(DRAIN_TIMEOUT);
    heartbeat(true);

    assertThat(lifecycle.state()).isEqualTo(WorkerLifecycle.State.DRAINED);
    assertThat(store.shuffles()).containsExactly(SHUFFLE);
  }

  @Test
  void aStopOfADrainedWorkerKeepsItDrainedAndDoesNotAnnounceAStop() {
    awaitState(WorkerLifecycle.State.DRAINED, true);
    int before = announced.get();

    lifecycle.stopGracefully();

    assertThat(lifecycle.state()).isEqualTo(WorkerLifecycle.State.DRAINED);
    assertThat(announced).hasValue(before);
  }

  @Test
  void aStopAfterACancelledDrainSealsWhatWasTakenSince() {
    store.reserve(SHUFFLE, List.of(new Reservation(0, 0, 0)));
    heartbeat(true); // draining: location (0, 0) is sealed
    Eventually.await("the drain's seal", () -> !store.takesData(new PartitionKey(SHUFFLE, 0, 0)));
    heartbeat(false); // included again
    store.reserve(SHUFFLE, List.of(new Reservation(0, 1, 0)));
    assertThat(store.takesData(new PartitionKey(SHUFFLE, 0, 1))).isTrue();
    assertThat(store.takesData(new PartitionKey(SHUFFLE, 0, 0)))
        .as("sealed by the drain, not opened again by its cancel")
        .isFalse();

    SealReport sealed = lifecycle.stopGracefully();

    assertThat(store.takesData(new PartitionKey(SHUFFLE, 0, 1)))
        .as("the location taken after the drain")
        .isFalse();
    assertThat(sealed.sealedLocations()).isEqualTo(2);
    assertThat(sealedRecorded).as("locations in the shuffle's sealed record").hasValue(2);
    assertThat(lifecycle.state()).isEqualTo(WorkerLifecycle.State.STOPPING);
    assertThat(announced).hasValue(1);
  }
}
