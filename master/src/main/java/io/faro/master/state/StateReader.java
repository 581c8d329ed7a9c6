package io.faro.master.state;

import io.faro.common.admission.AdmissionRules;
import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;

/**
 * Read-only access to the master state, handed to readers while the state machine holds its read
 * lock. Results are copies or immutable values, safe to keep after the read returns.
 */
public interface StateReader {
  Optional<RegisteredWorker> worker(WorkerId id);

  /** Alive workers, ordered by id. */
  List<RegisteredWorker> aliveWorkers();

  boolean hasApp(AppId id);

  List<AppId> appIds();

  boolean hasShuffle(ShuffleId id);

  /** An immutable copy of the whole state. */
  MasterStateView view();

  /**
   * Unmodifiable, ordered views of the live maps, without a copy: valid only during the read that
   * handed out this reader (for answers that page through them).
   */
  SortedMap<WorkerId, RegisteredWorker> workers();

  SortedMap<AppId, RegisteredApp> apps();

  SortedMap<ShuffleId, RegisteredShuffle> shuffles();

  /** The admission rules, checked when an application first registers. */
  AdmissionRules admission();

  /** The cluster's feature level (io.faro.common.version.FeatureLevel). */
  int featureLevel();

  /** Whether no command was ever applied (a new group, before its first entry). */
  boolean neverApplied();
}
