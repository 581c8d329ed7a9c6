package io.faro.client.fetch;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.ReadRange;
import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchDecoder;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Reads partitions {@code [startPartition, endPartition)} of a committed shuffle generation,
 * keeping only maps {@code [startMap, endMap)}: fetches every epoch of each partition chunk by
 * chunk in order, with up to {@code faro.client.fetch.prefetch.chunks} requests ahead, verifies
 * every batch's checksum, and returns exactly the batches of each map's winning attempt, each
 * batchId once.
 *
 * <p>Failures: a chunk that cannot be fetched (connection lost, timeout, worker error) or fails its
 * checksum is asked again, {@code faro.client.fetch.retries} times per copy with a growing wait,
 * then from the epoch's other copy (the replica, which cuts the same chunks) at the same chunk; a
 * copy whose worker refuses the connection (it is gone) is left at once when another copy remains.
 * When no copy serves it, or a partition was lost at commit, the reader throws DATA_LOST: the
 * engine re-runs the map stage. Batches read before a failure are not returned twice.
 *
 * <p>Its parts: {@link ChunkPrefetch} asks for the chunks in order, ahead of the one being read;
 * {@link Failover} decides where to go on after a failure; {@link BatchFilter} decides which
 * batches count. This class decodes each chunk, returns the batches kept and, at the end, checks
 * that every batch the winning attempts pushed was read.
 *
 * <p>Confined to the reducer's thread. Each returned batch is valid until the next call.
 */
public final class PartitionReader implements AutoCloseable {
  private final ShuffleId shuffle;
  private final ClientSettings settings;
  private final BatchDecoder decoder = new BatchDecoder();
  private final BatchFilter filter;
  private final ChunkPrefetch chunks;
  private final Failover failover;

  /** The partition a DATA_LOST failure found missing data in, when no chunk is being read. */
  private int failedPartition = -1;

  private Frame current;
  private ChunkRef currentRef;
  private BatchDecoder.Cursor cursor;
  private long bytesRead;
  private long chunksRead;
  private long waitNanos;

  /**
   * @throws FaroException DATA_LOST if one of the partitions was lost on every copy at commit
   */
  public PartitionReader(
      ReducerFileGroups groups, ReadRange range, ClientPool pool, ClientSettings settings) {
    this(groups, range, null, pool, settings);
  }

  /**
   * @param rangeExpected for a reader of some maps only: the batches their winning attempts pushed
   *     to each partition read (from the driver), which it checks as a reader of every map checks
   *     the groups' counts; null for a reader of every map
   * @throws FaroException DATA_LOST if one of the partitions was lost on every copy at commit
   */
  public PartitionReader(
      ReducerFileGroups groups,
      ReadRange range,
      long[] rangeExpected,
      ClientPool pool,
      ClientSettings settings) {
    requireNonNull(groups, "groups is null");
    this.shuffle = groups.faroShuffle();
    requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.filter = new BatchFilter(groups, range, rangeExpected);
    List<EpochGroup> epochGroups =
        epochGroups(groups, range.startPartition(), range.endPartition());
    this.chunks = new ChunkPrefetch(shuffle, epochGroups, filter, pool, settings);
    this.failover = new Failover(shuffle, chunks, settings);
  }

  /** Every epoch of each partition of [start, end), in the order they are read. */
  private List<EpochGroup> epochGroups(ReducerFileGroups groups, int start, int end) {
    List<EpochGroup> epochGroups = new ArrayList<>();
    for (int p = start; p < end; p++) {
      if (groups.lost(p)) {
        throw lost(
            shuffle,
            p,
            "its data was on no committed copy when the shuffle was committed (a worker was lost)",
            null);
      }
      TreeMap<Integer, List<CommittedFile>> byEpoch = new TreeMap<>();
      for (CommittedFile f : groups.files(p)) {
        byEpoch.computeIfAbsent(f.location().epoch(), e -> new ArrayList<>()).add(f);
      }
      for (List<CommittedFile> copies : byEpoch.values()) {
        epochGroups.add(new EpochGroup(p, List.copyOf(copies)));
      }
    }
    return epochGroups;
  }

  /** The DATA_LOST failure of a reader of {@code shuffle} that cannot read {@code partition}. */
  static FaroException lost(ShuffleId shuffle, int partition, String why, Throwable cause) {
    return new FaroException(
        ErrorCode.DATA_LOST,
        "partition " + partition + " of shuffle " + shuffle + " cannot be read: " + why,
        cause);
  }

  /**
   * The partition a {@link ErrorCode#DATA_LOST} failure was about, for the engine's fetch failure.
   */
  public int currentPartition() {
    if (failedPartition >= 0) {
      return failedPartition;
    }
    if (currentRef != null) {
      return currentRef.group().partition;
    }
    return chunks.headPartition();
  }

  /** The next kept batch, or null when every chunk has been read. */
  public Batch next() {
    while (true) {
      if (cursor != null) {
        Batch batch;
        try {
          batch = cursor.next(filter::keep);
        } catch (FaroException e) {
          if (e.code() != ErrorCode.DATA_CORRUPTED) {
            throw e;
          }
          ChunkRef failed = currentRef;
          releaseCurrent();
          failover.recover(failed, e);
          continue;
        }
        if (batch != null) {
          // Seen only once decoded: a batch that fails to decode is read again from the re-fetch.
          filter.returned(batch, currentRef.group().partition);
          return batch;
        }
        releaseCurrent();
        failover.chunkRead();
      }
      chunks.requestAhead();
      ChunkPrefetch.InFlight head = chunks.poll();
      if (head == null) {
        checkEveryBatchRead();
        return null;
      }
      String where = head.ref().describe(shuffle);
      long waitStart = System.nanoTime();
      try {
        current = Futures.await(head.answer(), settings.fetchTimeout(), "fetching " + where);
      } catch (FaroException e) {
        waitNanos += System.nanoTime() - waitStart;
        failover.recover(head.ref(), e);
        continue;
      }
      waitNanos += System.nanoTime() - waitStart;
      currentRef = head.ref();
      chunksRead++;
      bytesRead += current.body().readableBytes();
      cursor = decoder.cursor(current.body(), where);
      chunks.requestAhead();
    }
  }

  private void releaseCurrent() {
    if (current != null) {
      current.release();
    }
    current = null;
    cursor = null;
    currentRef = null;
  }

  /**
   * After the last chunk: each partition must have given exactly the batches its winning attempts
   * (of the maps read) reported at mapper end. Fewer means a batch was lost on its way (a push
   * dropped after being acknowledged, a commit that came too early): DATA_LOST, so that the engine
   * runs the map stage again, instead of a wrong answer. More cannot happen unless the counts are
   * wrong, which is as bad.
   */
  private void checkEveryBatchRead() {
    int p = filter.firstMiscounted();
    if (p >= 0) {
      failedPartition = p;
      throw lost(
          shuffle,
          p,
          "its winning map attempts pushed "
              + filter.expected(p)
              + " batches"
              + (filter.readsSomeMaps()
                  ? " (maps " + filter.startMap() + ".." + (filter.endMap() - 1) + ")"
                  : "")
              + " but "
              + filter.kept(p)
              + " were read from the committed files: data went missing after it was acknowledged",
          null);
    }
  }

  /** Chunks a reader of some maps did not fetch: they hold none of its maps. */
  public long chunksSkipped() {
    return chunks.chunksSkipped();
  }

  /** Chunks fetched so far. */
  public long chunksRead() {
    return chunksRead;
  }

  /** Fetches that failed and were tried again (on the same copy or the other). */
  public long fetchRetries() {
    return failover.fetchRetries();
  }

  /** Time spent waiting for chunks to arrive. */
  public long waitNanos() {
    return waitNanos;
  }

  /** Bytes fetched so far (as stored: compressed, with batch headers). */
  public long bytesRead() {
    return bytesRead;
  }

  /** Faro's id of the generation being read. */
  public ShuffleId shuffle() {
    return shuffle;
  }

  /** Releases the chunk being read and any prefetched ones. Idempotent. */
  @Override
  public void close() {
    releaseCurrent();
    chunks.close();
    decoder.close();
  }
}
