package io.faro.worker;

/** What a partition location does once its file passes the split threshold. */
public enum SplitMode {
  /** Keep appending, and answer SOFT_SPLIT so that clients move on after the batches in flight. */
  SOFT,
  /** Refuse with SPLIT: clients push the refused batches to a new location. */
  HARD
}
