package io.faro.worker.storage;

/**
 * The I/O threads each disk of one tier gets: one flusher and one reader suit an HDD (its writes
 * and reads stay sequential), flash takes several of each.
 *
 * @param flush flusher threads (faro.worker.tier.TIER.flush.threads)
 * @param read reader threads serving fetches (faro.worker.tier.TIER.read.threads)
 */
public record DiskThreads(int flush, int read) {
  public DiskThreads {
    if (flush < 1 || read < 1) {
      throw new IllegalArgumentException("a disk needs at least one thread of each: " + this);
    }
  }
}
