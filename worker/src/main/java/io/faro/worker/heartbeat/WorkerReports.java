package io.faro.worker.heartbeat;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.IdMapper;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import io.faro.proto.DiskLoadP;
import io.faro.proto.DiskSpecP;
import io.faro.proto.DiskStatusP;
import io.faro.proto.RegisterWorkerRequest;
import io.faro.proto.WorkerHeartbeatRequest;
import io.faro.proto.WorkerStateP;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.protocol.ProtoMapper;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskHealth;
import io.faro.worker.storage.Disks;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds what the worker tells the masters: its registration and each heartbeat, which carries each
 * disk's health as the disk checker last found it. Registration asks the file systems for their
 * size, a blocking call: run it on the heartbeat thread or the starting thread.
 */
public final class WorkerReports {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerReports.class);

  private final WorkerId workerId;
  private final WorkerEndpoint endpoint;
  private final Disks disks;
  private final PartitionStore store;
  private final Supplier<WorkerStateP> state;
  private final long startedAtMs;
  // Per disk: bytes written and read and their nanoseconds, over the last few heartbeats.
  private final List<RecentWindow> diskWindows = new ArrayList<>();
  // Files with data committed and their bytes, over the last few heartbeats.
  private final RecentWindow commits = new RecentWindow(RECENT_HEARTBEATS);

  /** Heartbeats that "recent" averages span: 30 s at the default interval of 5 s. */
  static final int RECENT_HEARTBEATS = 6;

  /** Fewer bytes than this in the window tell nothing of a disk's speed: reported as unknown. */
  static final long MIN_MEASURED_BYTES = 1 << 20;

  /**
   * @param state what the worker is doing now, for each heartbeat
   * @param startedAtMs when this process started, by this machine's clock
   */
  public WorkerReports(
      WorkerId workerId,
      WorkerEndpoint endpoint,
      Disks disks,
      PartitionStore store,
      Supplier<WorkerStateP> state,
      long startedAtMs) {
    this.workerId = requireNonNull(workerId, "workerId is null");
    this.endpoint = requireNonNull(endpoint, "endpoint is null");
    this.disks = requireNonNull(disks, "disks is null");
    this.store = requireNonNull(store, "store is null");
    this.state = requireNonNull(state, "state is null");
    this.startedAtMs = startedAtMs;
    disks.all().forEach(d -> diskWindows.add(new RecentWindow(RECENT_HEARTBEATS)));
  }

  public WorkerId workerId() {
    return workerId;
  }

  public RegisterWorkerRequest registration() {
    RegisterWorkerRequest.Builder request =
        RegisterWorkerRequest.newBuilder()
            .setWorkerId(workerId.value())
            .setEndpoint(IdMapper.toProto(endpoint));
    for (Disk disk : disks.all()) {
      long capacity;
      try {
        // A broken disk may have no directory to ask: it reports nothing, as its heartbeat does.
        capacity =
            disk.state() == DiskHealth.State.BROKEN
                ? 0
                : Math.min(disk.capacityBytes(), disk.dir().capacityBytes());
      } catch (IOException e) {
        LOG.warn("Cannot read the capacity of {}: {}", disk, e.toString());
        capacity = 0;
      }
      request.addDisks(
          DiskSpecP.newBuilder()
              .setIndex(disk.index())
              .setPath(disk.root().toString())
              .setTier(ProtoMapper.toProto(disk.tier()))
              .setCapacityBytes(capacity));
    }
    return request.build();
  }

  public WorkerHeartbeatRequest heartbeat() {
    WorkerHeartbeatRequest.Builder request =
        WorkerHeartbeatRequest.newBuilder()
            .setWorkerId(workerId.value())
            .setState(state.get())
            .setStartedAtMs(startedAtMs);
    int[] open = store.openPartitionsByDisk();
    for (Disk disk : disks.all()) {
      long[] recent = diskWindows.get(disk.index()).add(disk.ioTimes());
      double flushMs = msPerMiB(recent[0], recent[1]);
      double readMs = msPerMiB(recent[2], recent[3]);
      disk.reported(flushMs, readMs);
      DiskLoadP.Builder load =
          DiskLoadP.newBuilder()
              .setIndex(disk.index())
              .setTier(ProtoMapper.toProto(disk.tier()))
              .setActivePartitions(open[disk.index()])
              .setReserveBytes(disk.reserveBytes())
              .setFlushMsPerMib(flushMs)
              .setReadMsPerMib(readMs);
      // What the disk checker last found (a broken disk's space is not asked again here).
      DiskHealth health = disk.health();
      load.setUsableBytes(health.usableBytes())
          .setStatus(
              switch (health.state()) {
                case HEALTHY -> DiskStatusP.HEALTHY;
                case FULL -> DiskStatusP.FULL;
                case BROKEN -> DiskStatusP.BROKEN;
              });
      request.addDisks(load);
    }
    // Each shuffle with the bytes held of it, in the same order (the masters' byte quotas).
    store
        .bytesByShuffle()
        .forEach(
            (shuffle, bytes) -> {
              request.addShuffles(IdMapper.toProto(shuffle));
              request.addShuffleBytes(bytes);
            });
    long[] committed =
        commits.add(
            new long[] {store.counters().committedFiles(), store.counters().committedBytes()});
    request.setRecentCommittedFiles(committed[0]).setRecentCommittedBytes(committed[1]);
    return request.build();
  }

  /**
   * Milliseconds per MiB of {@code nanos} spent on {@code bytes}; 0 (unknown) for too few bytes.
   */
  static double msPerMiB(long bytes, long nanos) {
    if (bytes < MIN_MEASURED_BYTES) {
      return 0;
    }
    return nanos / 1e6 / ((double) bytes / (1 << 20));
  }
}
