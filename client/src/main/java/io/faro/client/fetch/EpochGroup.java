package io.faro.client.fetch;

import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import java.util.List;

/**
 * One epoch of one partition a reader reads: its committed copies (primary first), the one being
 * read, and, for a reader of some maps only, which of its chunks may hold them. Confined to the
 * reader's thread.
 */
final class EpochGroup {
  final int partition;
  final List<CommittedFile> copies;
  int copy;
  // Reading some maps only: which chunks may hold them (null: every chunk, or not asked yet).
  boolean[] wanted;
  boolean asked;

  EpochGroup(int partition, List<CommittedFile> copies) {
    this.partition = partition;
    this.copies = copies;
  }

  /** The copy being read. */
  CommittedFile file() {
    return copies.get(copy);
  }

  /** Goes on to the next copy (after the last, the first again). */
  void nextCopy() {
    copy = (copy + 1) % copies.size();
  }

  /** Whether {@code chunk} is to be fetched: false only for one known to hold none of the maps. */
  boolean wants(int chunk) {
    return wanted == null || chunk >= wanted.length || wanted[chunk];
  }
}
