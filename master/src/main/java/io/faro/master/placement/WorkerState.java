package io.faro.master.placement;

/**
 * What a worker last said it was doing, in its heartbeat. Held in each master's memory, never in
 * the Raft log (the worker says it again every heartbeat, and after a restart it registers afresh).
 * Only a serving worker gets new slots; the others are on their way out.
 */
public enum WorkerState {
  /** Takes slots, pushes and fetches (also what a worker too old to say is taken for). */
  SERVING,
  /** A graceful stop is under way; it comes back, on the same identity, after a restart. */
  STOPPING,
  /** Decommissioning: it serves reads until the shuffles it holds are gone. */
  DRAINING,
  /** Drained: it holds nothing anyone reads and exits. */
  DRAINED;

  /** Whether placement may give the worker new slots. */
  public boolean takesSlots() {
    return this == SERVING;
  }
}
