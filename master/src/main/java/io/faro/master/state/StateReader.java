package io.faro.master.state;

import io.faro.common.id.AppId;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import java.util.List;
import java.util.Optional;

/**
 * Read-only access to the master state, handed to readers while the state machine holds its
 * read lock. Results are copies or immutable values, safe to keep after the read returns.
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
}
