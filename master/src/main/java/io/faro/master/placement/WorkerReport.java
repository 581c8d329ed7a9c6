package io.faro.master.placement;

import static java.util.Objects.requireNonNull;

/**
 * What a worker's latest heartbeat said besides its disks; in each master's memory only (see {@link
 * WorkerState}).
 *
 * @param startedAtMs when the worker's process started, by its own clock (0: not said); a restart
 *     changes it, so an operator's tool can tell the new process from the old one
 * @param recentCommittedFiles partition files with data the worker committed lately
 * @param recentCommittedBytes their bytes: with the files, what a partition's size is estimated by
 */
public record WorkerReport(
    WorkerState state, long startedAtMs, long recentCommittedFiles, long recentCommittedBytes) {
  /** What is assumed of a worker that said nothing yet: it serves. */
  public static final WorkerReport UNKNOWN = new WorkerReport(WorkerState.SERVING, 0, 0, 0);

  public WorkerReport {
    requireNonNull(state, "state is null");
    // From the wire: a negative count must not lower another worker's sum.
    if (recentCommittedFiles < 0 || recentCommittedBytes < 0) {
      recentCommittedFiles = 0;
      recentCommittedBytes = 0;
    }
  }
}
