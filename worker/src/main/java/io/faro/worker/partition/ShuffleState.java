package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The partition writers one shuffle has on this worker, and its commit.
 *
 * <p>Threads: {@code writers} is read lock-free by pushes and fetches. Adding writers, starting
 * the commit and expiring are the rare transitions; they happen under {@code this}, so that a
 * reservation never slips in after the commit or the expiry has taken its snapshot of writers.
 */
final class ShuffleState {
  final ShuffleId id;
  final Map<PartitionKey, PartitionWriter> writers = new ConcurrentHashMap<>();

  // @GuardedBy("this")
  CompletableFuture<ShuffleCommit> commit;
  // @GuardedBy("this")
  boolean expired;

  // Written under this; read lock-free by pushes to tell STAGE_ENDED from NOT_HERE.
  volatile boolean commitStarted;

  ShuffleState(ShuffleId id) {
    this.id = requireNonNull(id, "id is null");
  }
}
