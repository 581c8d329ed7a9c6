package io.faro.client.driver;

import io.faro.common.id.WorkerId;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The workers of one application that failed a push or a reservation recently, with the time of the
 * last failure: revives leave them out for {@link #REMEMBERED_MILLIS}.
 */
final class FailedWorkers {
  /** How long a worker that failed is left out of revives of the app's shuffles. */
  static final long REMEMBERED_MILLIS = 60_000;

  private final Map<WorkerId, Long> lastFailure = new ConcurrentHashMap<>();

  void failed(WorkerId worker, long nowMillis) {
    lastFailure.put(worker, nowMillis);
  }

  /** The workers that failed within the last {@link #REMEMBERED_MILLIS}; forgets the others. */
  Set<WorkerId> since(long nowMillis) {
    lastFailure.values().removeIf(t -> nowMillis - t > REMEMBERED_MILLIS);
    return Set.copyOf(lastFailure.keySet());
  }
}
