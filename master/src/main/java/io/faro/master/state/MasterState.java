package io.faro.master.state;

import io.faro.common.admission.AdmissionRules;
import io.faro.common.error.ErrorCode;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.master.state.ApplyResult.Applied;
import io.faro.master.state.ApplyResult.Rejected;
import io.faro.master.state.StateCommand.AllocateSlots;
import io.faro.master.state.StateCommand.RegisterApp;
import io.faro.master.state.StateCommand.RegisterWorker;
import io.faro.master.state.StateCommand.RemoveApp;
import io.faro.master.state.StateCommand.SetWorkerAdmission;
import io.faro.master.state.StateCommand.UnregisterShuffle;
import io.faro.master.state.StateCommand.WorkerLost;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The replicated master state: workers, applications and their shuffles. It changes only through
 * {@link #apply}, one handler per command, and apply is deterministic: it reads neither the clock
 * nor randomness (the leader stamped the time into the command), and it iterates in key order. So
 * every master that applies the same log holds the same state.
 *
 * <p>Commands are idempotent where a retry can repeat them: registering a known worker or app
 * again, declaring a lost worker lost, removing an absent app or shuffle all succeed without
 * further change.
 *
 * <p>Not thread-safe. Confined to the Raft apply thread for writes; the owning state machine guards
 * it with a read-write lock so that readers on other threads see whole commands.
 */
public final class MasterState implements StateReader {
  static final Comparator<WorkerId> WORKER_ORDER = Comparator.comparing(WorkerId::value);
  static final Comparator<AppId> APP_ORDER = Comparator.comparing(AppId::value);
  static final Comparator<ShuffleId> SHUFFLE_ORDER = ShuffleId.ORDER;

  private final NavigableMap<WorkerId, RegisteredWorker> workers = new TreeMap<>(WORKER_ORDER);
  private final NavigableMap<AppId, RegisteredApp> apps = new TreeMap<>(APP_ORDER);
  private final NavigableMap<ShuffleId, RegisteredShuffle> shuffles = new TreeMap<>(SHUFFLE_ORDER);
  // The keys of shuffles, hashed: every worker's heartbeat asks after each shuffle it holds, a
  // thousand lookups a heartbeat on a large cluster, where the ordered map compares app ids.
  private final Set<ShuffleId> shuffleIds = new HashSet<>();
  private AdmissionRules admission = AdmissionRules.NONE;
  // The cluster's feature level (io.faro.common.version.FeatureLevel): 1 until raised.
  private int featureLevel = 1;
  // Whether a command was ever applied to this state (or it was loaded from a snapshot): a
  // bootstrap feature level is applied only to a state that never was.
  private boolean applied;

  public MasterState() {}

  /** A state holding exactly what {@code view} holds (used to load a snapshot). */
  public MasterState(MasterStateView view) {
    replaceWith(view);
  }

  /** Replaces the whole state, as when a snapshot is loaded. */
  public void replaceWith(MasterStateView view) {
    workers.clear();
    apps.clear();
    shuffles.clear();
    workers.putAll(view.workers());
    apps.putAll(view.apps());
    shuffles.putAll(view.shuffles());
    shuffleIds.clear();
    shuffleIds.addAll(shuffles.keySet());
    admission = view.admission();
    featureLevel = view.featureLevel();
    applied = true;
  }

  /** Applies one command; the one way the state changes. */
  public ApplyResult apply(StampedCommand stamped) {
    ApplyResult result = applyOne(stamped.timestampMs(), stamped.command());
    applied = true;
    return result;
  }

  private ApplyResult applyOne(long time, StateCommand command) {
    // Java 17 has no pattern switch; the sealed interface keeps this list complete.
    if (command instanceof RegisterWorker c) {
      return registerWorker(c, time);
    } else if (command instanceof WorkerLost c) {
      return workerLost(c);
    } else if (command instanceof SetWorkerAdmission c) {
      return setWorkerAdmission(c);
    } else if (command instanceof RegisterApp c) {
      return registerApp(c, time);
    } else if (command instanceof RemoveApp c) {
      return removeApp(c);
    } else if (command instanceof AllocateSlots c) {
      return allocateSlots(c);
    } else if (command instanceof UnregisterShuffle c) {
      return unregisterShuffle(c);
    } else if (command instanceof StateCommand.SetAdmissionRules c) {
      admission = c.rules();
      return Applied.NOTHING;
    } else if (command instanceof StateCommand.SetFeatureLevel c) {
      return setFeatureLevel(c);
    }
    throw new IllegalArgumentException("unknown command " + command);
  }

  /**
   * Raises the level; refuses a lower one (levels are never lowered: what was written at a level
   * stays in the log) and a bootstrap to a state that already applied commands (a group of a
   * release before feature levels, which stays at 1 until an operator raises it). The state machine
   * checks before that this release supports the level.
   */
  private ApplyResult setFeatureLevel(StateCommand.SetFeatureLevel c) {
    if (c.bootstrap() && applied) {
      return new Rejected(
          ErrorCode.INVALID_REQUEST,
          "the group already holds state: it stays at feature level "
              + featureLevel
              + " until an operator raises it (bin/faro admin feature-level set)");
    }
    if (c.level() < featureLevel) {
      return new Rejected(
          ErrorCode.INVALID_REQUEST,
          "the cluster is at feature level "
              + featureLevel
              + "; a level is never lowered (a roll back is possible only before it is raised)");
    }
    featureLevel = c.level();
    return Applied.NOTHING;
  }

  private ApplyResult registerWorker(RegisterWorker command, long time) {
    RegisteredWorker known = workers.get(command.worker());
    boolean unchanged =
        known != null
            && known.alive()
            && known.endpoint().equals(command.endpoint())
            && known.disks().equals(command.disks());
    if (!unchanged) {
      // A repeat of the same registration keeps the first time; a revival or a change is new.
      // An operator's exclusion or decommission outlives the worker's restarts.
      WorkerAdmission admission = known == null ? WorkerAdmission.ACTIVE : known.admission();
      workers.put(
          command.worker(),
          new RegisteredWorker(
              command.worker(),
              command.endpoint(),
              command.disks(),
              time,
              true,
              admission,
              known == null ? "" : known.admissionReason()));
    }
    return Applied.NOTHING;
  }

  private ApplyResult setWorkerAdmission(SetWorkerAdmission command) {
    if (!workers.containsKey(command.worker())) {
      return new Rejected(
          ErrorCode.INVALID_REQUEST, "no worker " + command.worker() + " is registered");
    }
    if (command.onlyIfDecommissioning()
        && workers.get(command.worker()).admission() != WorkerAdmission.DECOMMISSIONING) {
      return new Rejected(
          ErrorCode.INVALID_REQUEST,
          "worker " + command.worker() + " is no longer decommissioning: left as it is");
    }
    workers.computeIfPresent(
        command.worker(), (id, w) -> w.withAdmission(command.admission(), command.reason()));
    return Applied.NOTHING;
  }

  private ApplyResult workerLost(WorkerLost command) {
    // The worker's slots stay counted: its shuffles' lifecycle managers revive the partitions.
    workers.computeIfPresent(command.worker(), (id, worker) -> worker.lost());
    return Applied.NOTHING;
  }

  private ApplyResult registerApp(RegisterApp command, long time) {
    apps.putIfAbsent(
        command.app(), new RegisteredApp(command.app(), time, command.nonce(), command.profile()));
    return Applied.NOTHING;
  }

  private ApplyResult removeApp(RemoveApp command) {
    apps.remove(command.app());
    NavigableMap<ShuffleId, RegisteredShuffle> ofApp = appShuffles(command.app());
    shuffleIds.removeAll(ofApp.keySet());
    ofApp.clear();
    return Applied.NOTHING;
  }

  private ApplyResult allocateSlots(AllocateSlots command) {
    ShuffleId shuffle = command.shuffle();
    if (!apps.containsKey(shuffle.app())) {
      // An entry removing the app was ordered before this one: refuse, on every master alike.
      return new Rejected(
          ErrorCode.UNKNOWN_APP,
          "cannot allocate slots for shuffle "
              + shuffle
              + ": app "
              + shuffle.app()
              + " is not registered");
    }
    // Counted under the registered worker's own id: a thousand shuffles on a thousand workers
    // would otherwise hold a million copies of the ids, parsed from their log entries.
    SortedMap<WorkerId, Integer> added = new TreeMap<>(WORKER_ORDER);
    for (Map.Entry<WorkerId, Integer> slots : command.slotsPerWorker().entrySet()) {
      RegisteredWorker registered = workers.get(slots.getKey());
      if (registered == null) {
        return new Rejected(
            ErrorCode.INVALID_REQUEST,
            "cannot allocate slots for shuffle "
                + shuffle
                + ": worker "
                + slots.getKey()
                + " was never registered");
      }
      added.put(registered.id(), slots.getValue());
    }
    RegisteredShuffle known = shuffles.get(shuffle);
    RegisteredShuffle base =
        known != null ? known : RegisteredShuffle.of(shuffle, command.numPartitions(), Map.of());
    shuffles.put(shuffle, base.withSlots(command.numPartitions(), added, command.requestId()));
    shuffleIds.add(shuffle);
    return Applied.NOTHING;
  }

  private ApplyResult unregisterShuffle(UnregisterShuffle command) {
    shuffles.remove(command.shuffle());
    shuffleIds.remove(command.shuffle());
    return Applied.NOTHING;
  }

  private NavigableMap<ShuffleId, RegisteredShuffle> appShuffles(AppId app) {
    return shuffles.subMap(
        new ShuffleId(app, 0), true, new ShuffleId(app, Integer.MAX_VALUE), true);
  }

  // ------------------------------------------------------------------ reads

  @Override
  public Optional<RegisteredWorker> worker(WorkerId id) {
    return Optional.ofNullable(workers.get(id));
  }

  @Override
  public List<RegisteredWorker> aliveWorkers() {
    return workers.values().stream().filter(RegisteredWorker::alive).toList();
  }

  @Override
  public boolean hasApp(AppId id) {
    return apps.containsKey(id);
  }

  @Override
  public List<AppId> appIds() {
    return List.copyOf(apps.keySet());
  }

  @Override
  public boolean hasShuffle(ShuffleId id) {
    return shuffleIds.contains(id);
  }

  @Override
  public SortedMap<WorkerId, RegisteredWorker> workers() {
    return Collections.unmodifiableSortedMap(workers);
  }

  @Override
  public SortedMap<AppId, RegisteredApp> apps() {
    return Collections.unmodifiableSortedMap(apps);
  }

  @Override
  public SortedMap<ShuffleId, RegisteredShuffle> shuffles() {
    return Collections.unmodifiableSortedMap(shuffles);
  }

  @Override
  public AdmissionRules admission() {
    return admission;
  }

  @Override
  public MasterStateView view() {
    return new MasterStateView(workers, apps, shuffles, admission, featureLevel);
  }

  @Override
  public int featureLevel() {
    return featureLevel;
  }

  @Override
  public boolean neverApplied() {
    return !applied;
  }
}
