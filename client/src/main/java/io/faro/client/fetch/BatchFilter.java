package io.faro.client.fetch;

import io.faro.client.ReadRange;
import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchFormat;
import java.util.BitSet;

/**
 * Which batches a reader returns, and whether it returned all of them. A batch counts when its map
 * is in the range read, its attempt won the map, and it was not returned before: a retried push, a
 * speculative or re-run attempt and a chunk read again after a failover all put batches on the wire
 * twice or more, and each is returned once. Once every chunk is read, each partition must have
 * given exactly the batches its winning attempts reported at mapper end: the attempts of every map
 * for a reader of every map, those of its maps for a reader of a map range (a skewed partition's
 * split, Spark's local reader), with the counts the driver answers for that range. A batch id at or
 * beyond the batches its attempt pushed in all is corrupt, so that the ids kept seen per map are
 * bounded by what the attempt declared, not by the largest id on the wire.
 *
 * <p>Confined to the reader's thread.
 */
final class BatchFilter {
  private final ReducerFileGroups groups;
  private final int startPartition;
  private final int endPartition;
  private final int startMap;
  private final int endMap;
  // Per map: the batch ids returned.
  private final BitSet[] seen;
  // Per partition of [startPartition, endPartition): batches returned.
  private final long[] kept;
  // For a reader of a map range: per partition of the range, the batches its maps' winners
  // pushed; null for a reader of every map (the groups have those counts).
  private final long[] rangeExpected;

  BatchFilter(ReducerFileGroups groups, ReadRange range) {
    this(groups, range, null);
  }

  /**
   * @param rangeExpected for a reader of only some maps: the batches their winning attempts pushed
   *     to each partition of [startPartition, endPartition); null when not known (not checked)
   */
  BatchFilter(ReducerFileGroups groups, ReadRange range, long[] rangeExpected) {
    int startPartition = range.startPartition();
    int endPartition = range.endPartition();
    if (rangeExpected != null
        && rangeExpected.length != Math.max(0, endPartition - startPartition)) {
      throw new IllegalArgumentException(
          "batch counts of "
              + rangeExpected.length
              + " partitions for a reader of "
              + (endPartition - startPartition));
    }
    this.rangeExpected = rangeExpected;
    this.groups = groups;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.startMap = Math.max(0, range.startMap());
    this.endMap = Math.min(groups.numMaps(), range.endMap());
    this.seen = new BitSet[groups.numMaps()];
    this.kept = new long[Math.max(0, endPartition - startPartition)];
  }

  /**
   * Whether a batch counts. Called after the batch's CRC checked, so its header is as its writer
   * wrote it; a header no writer writes (a negative batch id) is corrupt. A batch counts as
   * returned only once {@link #returned} says so, after it decoded: one that fails to decode is
   * read again from the re-fetch.
   */
  boolean keep(int mapId, int attemptId, int batchId) {
    if (mapId < startMap || mapId >= endMap || groups.winningAttempt(mapId) != attemptId) {
      return false;
    }
    if (batchId < 0) {
      throw BatchFormat.corrupt(
          "batch of map " + mapId + " attempt " + attemptId + " has negative id " + batchId);
    }
    int declared = groups.mapBatches(mapId);
    if (declared >= 0 && batchId >= declared) {
      throw BatchFormat.corrupt(
          "batch "
              + batchId
              + " of map "
              + mapId
              + " attempt "
              + attemptId
              + ": that attempt pushed "
              + declared
              + " batches, numbered from 0");
    }
    BitSet ids = seen[mapId];
    if (ids == null) {
      ids = seen[mapId] = new BitSet();
    }
    return !ids.get(batchId);
  }

  /** Whether only some maps are read (a skewed partition split by map ranges). */
  boolean readsSomeMaps() {
    return startMap != 0 || endMap != groups.numMaps();
  }

  /** The first map read. */
  int startMap() {
    return startMap;
  }

  /** One past the last map read. */
  int endMap() {
    return endMap;
  }

  /** Whether a chunk holding only maps {@code [first, last]} may hold a batch that counts. */
  boolean mayKeep(int firstMap, int lastMap) {
    return lastMap >= startMap && firstMap < endMap;
  }

  /** {@code batch}, of {@code partition}, decoded and is returned. */
  void returned(Batch batch, int partition) {
    seen[batch.mapId()].set(batch.batchId());
    kept[partition - startPartition]++;
  }

  /**
   * After the last chunk: the first partition that gave another number of batches than its winning
   * attempts pushed (of the maps read), or -1. A reader of a map range without the driver's counts
   * for it gets -1.
   */
  int firstMiscounted() {
    if (readsSomeMaps() && rangeExpected == null) {
      return -1;
    }
    for (int p = startPartition; p < endPartition; p++) {
      long expected = expected(p);
      if (expected >= 0 && kept(p) != expected) {
        return p;
      }
    }
    return -1;
  }

  /**
   * The batches this reader must read of {@code partition}: its maps' winners' (-1 when not
   * counted).
   */
  long expected(int partition) {
    return rangeExpected != null
        ? rangeExpected[partition - startPartition]
        : groups.expectedBatches(partition);
  }

  /** Batches returned of {@code partition}. */
  long kept(int partition) {
    return kept[partition - startPartition];
  }
}
