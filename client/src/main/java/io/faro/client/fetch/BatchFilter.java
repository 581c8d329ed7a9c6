package io.faro.client.fetch;

import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchFormat;
import java.util.BitSet;

/**
 * Which batches a reader returns, and whether it returned all of them. A batch counts when its map
 * is in the range read, its attempt won the map, and it was not returned before: a retried push, a
 * speculative or re-run attempt and a chunk read again after a failover all put batches on the wire
 * twice or more, and each is returned once. Once every chunk is read, each partition must have
 * given exactly the batches its winning attempts reported at mapper end.
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

  BatchFilter(
      ReducerFileGroups groups, int startPartition, int endPartition, int startMap, int endMap) {
    this.groups = groups;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.startMap = Math.max(0, startMap);
    this.endMap = Math.min(groups.numMaps(), endMap);
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
   * attempts pushed, or -1. Only a reader of every map can tell (the counts are per partition over
   * all maps); a reader of a map range gets -1.
   */
  int firstMiscounted() {
    if (startMap != 0 || endMap != groups.numMaps()) {
      return -1;
    }
    for (int p = startPartition; p < endPartition; p++) {
      long expected = groups.expectedBatches(p);
      if (expected >= 0 && kept(p) != expected) {
        return p;
      }
    }
    return -1;
  }

  /** Batches returned of {@code partition}. */
  long kept(int partition) {
    return kept[partition - startPartition];
  }
}
