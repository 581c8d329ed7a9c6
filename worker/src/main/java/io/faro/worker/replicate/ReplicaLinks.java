package io.faro.worker.replicate;

import static java.util.Objects.requireNonNull;

import io.faro.common.network.ClientPool;
import io.faro.common.network.HostPort;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This worker's links to the peers that hold replicas of its primaries: one live link per peer. A
 * failed link is replaced for new reservations; writers bound to it keep it (and refuse data).
 * Thread-safe.
 */
public final class ReplicaLinks {
  private final ClientPool pool;
  private final Duration timeout;
  private final Map<HostPort, ReplicaLink> links = new ConcurrentHashMap<>();

  /**
   * @param timeout how long a forwarded frame may wait for the peer's answer
   */
  public ReplicaLinks(ClientPool pool, Duration timeout) {
    this.pool = requireNonNull(pool, "pool is null");
    this.timeout = requireNonNull(timeout, "timeout is null");
  }

  /** The live link to the peer whose push port is {@code peer}. */
  public ReplicaLink link(HostPort peer) {
    return links.compute(
        peer,
        (p, existing) ->
            existing != null && !existing.failed() ? existing : new ReplicaLink(p, pool, timeout));
  }
}
