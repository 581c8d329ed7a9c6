package io.faro.client.fetch;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.client.ClientSettings;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.Futures;
import io.faro.common.network.RemoteException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a reader goes on after a chunk failed (it could not be fetched, or failed its checksum):
 * the same copy again after a growing wait, faro.client.fetch.retries times; then the epoch's other
 * copy (the replica, which cuts the same chunks) at the same chunk; DATA_LOST once every copy
 * failed. Two failures count differently: a busy worker (one whose read buffers are all in use) is
 * asked again without counting against its copy, up to a bound; a copy whose worker refuses the
 * connection (it is gone) is left at once when another copy remains, and, when it is the last, is
 * asked again until faro.client.worker.restart.wait has passed, as its worker may be restarting.
 *
 * <p>Counts failures for the chunk at the head of the stream; {@link #chunkRead} starts over.
 * Confined to the reader's thread.
 */
final class Failover {
  // The reader's log lines keep the reader's name.
  private static final Logger LOG = LoggerFactory.getLogger(PartitionReader.class);

  /** Busy answers tolerated per configured retry before a busy copy counts as failing. */
  private static final int BUSY_RETRIES_PER_RETRY = 10;

  /** How often a reader asks a worker that refuses connections whether it is back. */
  static final long RESTART_POLL_MILLIS = 250;

  private final ShuffleId shuffle;
  private final ChunkPrefetch chunks;
  private final ClientSettings settings;
  // Failures of the chunk at the head of the stream: on the copy being read, and copies given up.
  private int failuresOnCopy;
  private int copiesGivenUp;
  // Busy answers in a row for busyChunk (a worker whose read buffers are all in use).
  private ChunkRef busyChunk;
  private int busyAnswers;
  // The chunk whose only remaining copy refused connections, and since when.
  private ChunkRef refusedChunk;
  private long refusedSinceNanos;
  private long fetchRetries;

  Failover(ShuffleId shuffle, ChunkPrefetch chunks, ClientSettings settings) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.chunks = requireNonNull(chunks, "chunks is null");
    this.settings = requireNonNull(settings, "settings is null");
  }

  /** The chunk at the head of the stream was read whole: the next one starts with no failure. */
  void chunkRead() {
    failuresOnCopy = 0;
    copiesGivenUp = 0;
  }

  /**
   * Restarts the stream at {@code failed}: after a wait on the same copy, or at once on the epoch's
   * other copy, or throws DATA_LOST when every copy failed its retries.
   */
  void recover(ChunkRef failed, FaroException error) {
    chunks.dropInFlight();
    fetchRetries++;
    EpochGroup group = failed.group();
    if (busy(error)
        && busyAnswers(failed) <= Math.max(1, settings.fetchRetries()) * BUSY_RETRIES_PER_RETRY) {
      // The worker answered that its read buffers are all in use: it is busy, not failing, and
      // its copy is as good as before. Wait and ask the same copy again, without counting it
      // against the copy (after enough of them, a busy worker counts as failing like any other).
      LOG.info("{} is busy ({}); asking again", failed.describe(shuffle), error.getMessage());
      sleep(settings.fetchRetryWait().toMillis() << Math.min(busyAnswers - 1, 4));
      chunks.restartAt(failed);
      return;
    }
    boolean lastCopy = copiesGivenUp + 1 >= group.copies.size();
    if (Futures.connectionRefused(error) && lastCopy && waitForRestart(failed, error)) {
      chunks.restartAt(failed);
      return;
    }
    retryOrSwitch(failed, error, lastCopy);
  }

  /**
   * The failure counts against the copy: asks it again after a wait, or goes on to the epoch's
   * other copy once this one failed every retry (at once when its worker cannot be reached and
   * another copy remains).
   */
  private void retryOrSwitch(ChunkRef failed, FaroException error, boolean lastCopy) {
    EpochGroup group = failed.group();
    int perCopy = settings.fetchRetries() + 1;
    // Nothing listens where the copy is (its worker died): asking it again only wastes the
    // backoff, when the epoch has another copy to go to.
    boolean unreachable = Futures.connectionRefused(error) && !lastCopy;
    boolean switchCopy = unreachable || ++failuresOnCopy >= perCopy;
    if (switchCopy) {
      if (++copiesGivenUp >= group.copies.size()) {
        throw PartitionReader.lost(
            shuffle,
            group.partition,
            "every copy failed "
                + perCopy
                + " times; last: "
                + failed.describe(shuffle)
                + ": "
                + error.getMessage(),
            error);
      }
      failuresOnCopy = 0;
      group.nextCopy();
    }
    LOG.warn(
        "Fetching {} failed ({}); {}",
        failed.describe(shuffle),
        error.getMessage(),
        switchCopy
            ? "switching to the other copy"
                + (unreachable ? " at once: its worker cannot be reached" : "")
            : "asking again (retry " + failuresOnCopy + ")");
    if (!switchCopy) {
      sleep(settings.fetchRetryWait().toMillis() << Math.min(failuresOnCopy - 1, 4));
    }
    if (chunks.restartAtOrAfter(failed)) {
      chunkRead();
    }
  }

  /**
   * The only copy left refuses connections: its worker is down, and may be restarting (a restarted
   * worker serves what it committed again). Waits {@link #RESTART_POLL_MILLIS} (at most) and
   * returns true to ask it again, until faro.client.worker.restart.wait has passed since the first
   * refusal for this chunk; then false, and the failure counts as any other.
   */
  private boolean waitForRestart(ChunkRef chunk, FaroException error) {
    long now = System.nanoTime();
    boolean same = chunk.sameAs(refusedChunk);
    if (!same) {
      refusedChunk = chunk;
      refusedSinceNanos = now;
    }
    long waited = now - refusedSinceNanos;
    if (waited >= settings.workerRestartWait().toNanos()) {
      return false;
    }
    if (!same) {
      LOG.warn(
          "{}: its worker refuses connections ({}); waiting up to {} s for it to come back ({})",
          chunk.describe(shuffle),
          error.getMessage(),
          settings.workerRestartWait().toSeconds(),
          ClientOptions.WORKER_RESTART_WAIT.key());
    }
    // A refused connection costs the worker nothing: ask often, so that a worker back from its
    // restart (about 2 s) is read from within a quarter of a second.
    sleep(Math.min(RESTART_POLL_MILLIS, Math.max(1, settings.fetchRetryWait().toMillis())));
    return true;
  }

  /** Busy answers for {@code chunk} in a row, counting this one. */
  private int busyAnswers(ChunkRef chunk) {
    boolean same = chunk.sameAs(busyChunk);
    busyChunk = chunk;
    busyAnswers = same ? busyAnswers + 1 : 1;
    return busyAnswers;
  }

  /**
   * Whether the worker itself answered TIMEOUT: its read buffers were all in use (busy, not lost).
   */
  private static boolean busy(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof RemoteException remote) {
        return remote.code() == ErrorCode.TIMEOUT;
      }
    }
    return false;
  }

  /**
   * The backoff before asking the same copy again: a worker that dropped a connection may be busy.
   */
  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaroException(ErrorCode.INTERNAL, "interrupted while waiting to fetch again", e);
    }
  }

  /** Fetches that failed and were tried again (on the same copy or the other). */
  long fetchRetries() {
    return fetchRetries;
  }
}
