package io.faro.master.state;

/**
 * Whether placement may give a worker new slots. Replicated (an operator's decision must survive a
 * failover and a restart of the worker); the worker's data is served in every state.
 */
public enum WorkerAdmission {
  /** Takes new slots. */
  ACTIVE,
  /** Takes no new slots: an operator took it out (e.g. a suspect machine). */
  EXCLUDED,
  /** Takes no new slots and is on its way out (e.g. before an upgrade or removal). */
  DECOMMISSIONING,
  /**
   * Decommissioned: it drained (or its drain timed out) and exited. Set by the leader when the
   * worker reports it drained; takes no slots until an operator includes it again.
   */
  DECOMMISSIONED
}
