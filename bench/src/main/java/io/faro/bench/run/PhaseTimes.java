package io.faro.bench.run;

/**
 * Wall time of each phase, in nanoseconds.
 *
 * @param placementNanos asking the lifecycle manager for push locations (slots from the master,
 *     reserved on the workers)
 * @param pushNanos from the first map task's start to the last {@code finish()}: every push
 *     answered
 * @param commitNanos from the last map's end report (which starts the commit) until the committed
 *     files are known
 * @param fetchNanos from the first reader's start until every partition was read and tallied
 */
public record PhaseTimes(long placementNanos, long pushNanos, long commitNanos, long fetchNanos) {}
