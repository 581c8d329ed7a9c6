package io.faro.master.state;

import static java.util.Objects.requireNonNull;

import io.faro.common.admission.AdmissionRules;
import io.faro.common.admission.AppProfile;
import io.faro.common.id.AppId;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerEndpoint;
import io.faro.common.id.WorkerId;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A change to the master state: the domain form of one Raft log entry ({@code MasterCommand} in
 * faro.proto). The leader computes a command (for example the slot placement) and every master
 * applies the same command with {@link MasterState#apply}. Constructors check what a command must
 * satisfy whatever the state, so a malformed entry is refused before it reaches the log.
 */
public sealed interface StateCommand {

  /** Registers a worker, or revives / updates a known one. */
  record RegisterWorker(WorkerId worker, WorkerEndpoint endpoint, List<DiskSpec> disks)
      implements StateCommand {
    public RegisterWorker {
      requireNonNull(worker, "worker is null");
      requireNonNull(endpoint, "endpoint is null");
      disks = List.copyOf(disks);
      if (disks.stream().map(DiskSpec::index).distinct().count() != disks.size()) {
        throw new IllegalArgumentException(
            "worker " + worker + " declares a disk index twice: " + disks);
      }
    }
  }

  /**
   * An operator's decision whether {@code worker} takes new slots; or, with {@code
   * onlyIfDecommissioning}, the masters' record that a decommissioning worker drained, applied only
   * if it is still decommissioning (an include-worker applied first wins).
   */
  record SetWorkerAdmission(
      WorkerId worker, WorkerAdmission admission, String reason, boolean onlyIfDecommissioning)
      implements StateCommand {
    public SetWorkerAdmission {
      requireNonNull(worker, "worker is null");
      requireNonNull(admission, "admission is null");
      requireNonNull(reason, "reason is null");
    }

    public SetWorkerAdmission(WorkerId worker, WorkerAdmission admission, String reason) {
      this(worker, admission, reason, false);
    }
  }

  /** Declares a worker lost (no heartbeat within faro.master.worker.timeout). */
  record WorkerLost(WorkerId worker, String reason) implements StateCommand {
    public WorkerLost {
      requireNonNull(worker, "worker is null");
      requireNonNull(reason, "reason is null");
    }
  }

  /**
   * Registers an application; the first registration of an id keeps its nonce (empty without
   * authentication), later ones change nothing.
   */
  record RegisterApp(AppId app, String nonce, AppProfile profile) implements StateCommand {
    public RegisterApp {
      requireNonNull(app, "app is null");
      requireNonNull(nonce, "nonce is null");
      requireNonNull(profile, "profile is null");
    }

    public RegisterApp(AppId app, String nonce) {
      this(app, nonce, AppProfile.UNKNOWN);
    }

    /** A registration without authentication. */
    public RegisterApp(AppId app) {
      this(app, "");
    }
  }

  /**
   * Replaces the admission rules (checked when an application first registers; see
   * io.faro.common.admission.AdmissionRules).
   */
  record SetAdmissionRules(AdmissionRules rules) implements StateCommand {
    public SetAdmissionRules {
      requireNonNull(rules, "rules is null");
    }
  }

  /**
   * Raises the cluster's feature level to {@code level} (see {@link
   * io.faro.common.version.FeatureLevel}); with {@code bootstrap}, the first entry of a new group,
   * applied only to a state that never applied a command.
   */
  record SetFeatureLevel(int level, boolean bootstrap) implements StateCommand {
    public SetFeatureLevel {
      if (level < 1) {
        throw new IllegalArgumentException("a feature level is at least 1, not " + level);
      }
    }
  }

  /** Removes an application and every shuffle of it. */
  record RemoveApp(AppId app, String reason) implements StateCommand {
    public RemoveApp {
      requireNonNull(app, "app is null");
      requireNonNull(reason, "reason is null");
    }
  }

  /**
   * Records the slots the leader placed: how many partition copies (primaries and replicas) each
   * worker was given. An existing shuffle gets them added, in place of those of an earlier
   * allocation with the same (non-empty) {@code requestId}. The locations themselves are not logged
   * (the leader answers them to the requester), so an entry grows with the workers used, not with
   * the partitions placed: a million partitions fit Ratis's entry limit.
   */
  record AllocateSlots(
      ShuffleId shuffle,
      int numPartitions,
      SortedMap<WorkerId, Integer> slotsPerWorker,
      String requestId)
      implements StateCommand {
    public AllocateSlots(ShuffleId shuffle, int numPartitions, List<PartitionLocation> locations) {
      this(shuffle, numPartitions, locations, "");
    }

    public AllocateSlots(
        ShuffleId shuffle, int numPartitions, List<PartitionLocation> locations, String requestId) {
      this(shuffle, numPartitions, slotsOf(shuffle, numPartitions, locations), requestId);
    }

    public AllocateSlots {
      requireNonNull(shuffle, "shuffle is null");
      requireNonNull(requestId, "requestId is null");
      if (numPartitions <= 0 || slotsPerWorker.isEmpty()) {
        throw new IllegalArgumentException(
            "allocation for shuffle "
                + shuffle
                + " has "
                + numPartitions
                + " partitions and slots on "
                + slotsPerWorker.size()
                + " workers");
      }
      SortedMap<WorkerId, Integer> copy = new TreeMap<>(MasterState.WORKER_ORDER);
      slotsPerWorker.forEach(
          (worker, slots) -> {
            if (slots == null || slots <= 0) {
              throw new IllegalArgumentException(
                  "allocation for shuffle "
                      + shuffle
                      + " gives worker "
                      + worker
                      + " "
                      + slots
                      + " slots");
            }
            copy.put(requireNonNull(worker, "worker is null"), slots);
          });
      slotsPerWorker = Collections.unmodifiableSortedMap(copy);
    }

    /** Slots per worker of {@code locations} and their replicas. */
    public static SortedMap<WorkerId, Integer> slotsOf(
        ShuffleId shuffle, int numPartitions, List<PartitionLocation> locations) {
      SortedMap<WorkerId, Integer> slots = new TreeMap<>(MasterState.WORKER_ORDER);
      for (PartitionLocation location : locations) {
        if (location.partition() < 0 || location.partition() >= numPartitions) {
          throw new IllegalArgumentException(
              "allocation for shuffle "
                  + shuffle
                  + " places partition "
                  + location.partition()
                  + ", outside 0.."
                  + (numPartitions - 1));
        }
        for (PartitionLocation copy : location.copies()) {
          slots.merge(copy.worker(), 1, Integer::sum);
        }
      }
      return slots;
    }

    /** Slots in all, over every worker. */
    public long totalSlots() {
      return slotsPerWorker.values().stream().mapToLong(Integer::longValue).sum();
    }
  }

  record UnregisterShuffle(ShuffleId shuffle) implements StateCommand {
    public UnregisterShuffle {
      requireNonNull(shuffle, "shuffle is null");
    }
  }
}
