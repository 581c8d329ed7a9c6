package io.faro.worker.protocol;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.DiskTier;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.HostPort;
import io.faro.proto.CommitFilesResponse;
import io.faro.proto.CommittedPartitionP;
import io.faro.proto.DiskTierP;
import io.faro.proto.PartitionLocationP;
import io.faro.proto.PushStatusP;
import io.faro.proto.RoleP;
import io.faro.proto.WorkerStateP;
import io.faro.proto.WorkerStatusResponse;
import io.faro.worker.lifecycle.WorkerLifecycle;
import io.faro.worker.partition.LocationKeys;
import io.faro.worker.partition.PartitionCommit;
import io.faro.worker.partition.PushStatus;
import io.faro.worker.partition.Reservation;
import io.faro.worker.partition.ShuffleCommit;
import io.faro.worker.status.WorkerStatus;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The worker's one translation between protobuf messages and domain records. Malformed ids from the
 * wire become INVALID_REQUEST errors here, so handlers deal in valid records only.
 */
public final class ProtoMapper {
  private ProtoMapper() {}

  /**
   * @throws FaroException INVALID_REQUEST for a negative partition or epoch
   */
  public static PartitionKey partitionKey(ShuffleId shuffle, int partition, int epoch) {
    if (partition < 0 || epoch < 0) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "bad partition " + partition + " epoch " + epoch + " in shuffle " + shuffle);
    }
    return new PartitionKey(shuffle, partition, epoch);
  }

  public static Reservation reservation(PartitionLocationP location) {
    // A primary's writer forwards to its replica's push port.
    Optional<HostPort> replica =
        location.hasReplica()
            ? Optional.of(
                new HostPort(
                    location.getReplica().getEndpoint().getHost(),
                    location.getReplica().getEndpoint().getPushPort()))
            : Optional.empty();
    return new Reservation(
        location.getPartitionId(),
        location.getEpoch(),
        location.getDiskIndex(),
        replica,
        location.getRole() == RoleP.REPLICA && replica.isEmpty());
  }

  public static DiskTierP toProto(DiskTier tier) {
    return switch (tier) {
      case NVME -> DiskTierP.NVME;
      case SSD -> DiskTierP.SSD;
      case HDD -> DiskTierP.HDD;
    };
  }

  /** The push status of an appended part; {@code slowDown} turns OK into SLOW_DOWN. */
  public static PushStatusP toProto(PushStatus status, boolean slowDown) {
    return switch (status) {
      case OK -> slowDown ? PushStatusP.SLOW_DOWN : PushStatusP.OK;
      case SOFT_SPLIT -> PushStatusP.SOFT_SPLIT;
      case SPLIT -> PushStatusP.SPLIT;
      case STAGE_ENDED -> PushStatusP.STAGE_ENDED;
      case NOT_HERE -> PushStatusP.NOT_HERE;
      case REPLICA_FAILED -> PushStatusP.REPLICA_FAILED;
      case WORKER_FULL -> PushStatusP.WORKER_FULL;
    };
  }

  public static WorkerStateP toProto(WorkerLifecycle.State state) {
    return switch (state) {
      case SERVING -> WorkerStateP.SERVING;
      case STOPPING -> WorkerStateP.STOPPING;
      case DRAINING -> WorkerStateP.DRAINING;
      case DRAINED -> WorkerStateP.DRAINED;
    };
  }

  /** The answer to a commit that reports every location. */
  public static CommitFilesResponse toProto(ShuffleCommit commit) {
    CommitFilesResponse.Builder response = CommitFilesResponse.newBuilder();
    for (PartitionCommit.Committed c : commit.committed()) {
      response.addCommitted(committed(c.key().partition(), c.key().epoch(), c));
    }
    commit
        .empty()
        .forEach(
            k ->
                response.addCommitted(
                    committed(LocationKeys.partition(k), LocationKeys.epoch(k), null)));
    for (PartitionCommit.Failed f : commit.failed()) {
      response.addFailedPartitionIds(f.key().partition());
      response.addFailedEpochs(f.key().epoch());
    }
    return response.build();
  }

  /**
   * The answer to a commit that reports only the locations {@code asked}: each as committed (with
   * its bytes, or empty) or failed, and left out when this worker does not hold it.
   */
  public static CommitFilesResponse toProto(ShuffleCommit commit, LocationKeys asked) {
    CommitFilesResponse.Builder response = CommitFilesResponse.newBuilder();
    // Both lists are in (partition, epoch) order, as the keys are.
    List<PartitionCommit.Committed> committed = commit.committed();
    List<PartitionCommit.Failed> failed = commit.failed();
    int[] at = new int[2];
    asked.forEach(
        k -> {
          int partition = LocationKeys.partition(k);
          int epoch = LocationKeys.epoch(k);
          while (at[0] < committed.size() && LocationKeys.key(committed.get(at[0]).key()) < k) {
            at[0]++;
          }
          while (at[1] < failed.size() && LocationKeys.key(failed.get(at[1]).key()) < k) {
            at[1]++;
          }
          if (at[0] < committed.size() && LocationKeys.key(committed.get(at[0]).key()) == k) {
            response.addCommitted(committed(partition, epoch, committed.get(at[0])));
          } else if (commit.empty().contains(partition, epoch)) {
            response.addCommitted(committed(partition, epoch, null));
          } else if (at[1] < failed.size() && LocationKeys.key(failed.get(at[1]).key()) == k) {
            response.addFailedPartitionIds(partition);
            response.addFailedEpochs(epoch);
          }
        });
    return response.build();
  }

  /** One committed location; {@code c} null for one that received nothing. */
  private static CommittedPartitionP committed(
      int partition, int epoch, PartitionCommit.Committed c) {
    return CommittedPartitionP.newBuilder()
        .setPartitionId(partition)
        .setEpoch(epoch)
        .setBytes(c == null ? 0 : c.bytes())
        .setChunks(c == null ? 0 : c.chunks().chunkCount())
        .build();
  }

  public static WorkerStatusResponse toProto(WorkerStatus status) {
    return WorkerStatusResponse.newBuilder()
        .setProcessCpuNanos(status.processCpuNanos())
        .setRssBytes(status.rssBytes())
        .setPeakRssBytes(status.peakRssBytes())
        .setDirectMemoryBytes(status.directMemoryBytes())
        .setPeakDirectMemoryBytes(status.peakDirectMemoryBytes())
        .setMemoryBudgetUsedBytes(status.memoryBudgetUsedBytes())
        .setPeakMemoryBudgetUsedBytes(status.peakMemoryBudgetUsedBytes())
        .setMemoryPauseBytes(status.memoryPauseBytes())
        .setMemoryPauses(status.memoryPauses())
        .setMemoryPausedMs(status.memoryPausedMs())
        .setHeapUsedBytes(status.heapUsedBytes())
        .setHeapMaxBytes(status.heapMaxBytes())
        .setUptimeMs(status.uptimeMs())
        .addAllDiskIoModes(
            status.diskIoModes().stream().map(m -> m.name().toLowerCase(Locale.ROOT)).toList())
        .build();
  }
}
