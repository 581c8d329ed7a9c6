package io.faro.client.push;

/** What the answer to one push frame says about its worker's pace ({@link WorkerWindow}). */
enum Pace {
  /** Read and answered without a SLOW_DOWN. */
  KEPT_UP,
  /** Some part was answered SLOW_DOWN. */
  SLOW_DOWN,
  /** No answer to judge by: a timeout, a lost connection, an error or unexpected answer. */
  UNKNOWN
}
