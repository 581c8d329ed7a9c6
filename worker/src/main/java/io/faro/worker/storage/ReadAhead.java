package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Which committed files of one shuffle on this worker to read ahead, as reducers fetch it.
 *
 * <p>Spark starts a stage's reduce tasks in partition order, so the partitions fetched next are the
 * ones after the highest fetched so far (the <em>frontier</em>), not the ones after the partition
 * just fetched: with a thousand tasks running at once, the next thousand partitions are being
 * fetched already. Each fetch moves the frontier up to its partition; the plan then names the files
 * after the frontier not named before, so that at most {@code maxFiles} files and {@code maxBytes}
 * bytes beyond the frontier are read ahead. A partition fetched below the frontier (a retried task,
 * a second reader of the shuffle) moves nothing.
 *
 * <p>Only this worker's primary copies are in the plan (a replica is read only when its primary is
 * lost). Files on a disk with direct I/O move the frontier when fetched but are never named, nor
 * counted against the limits: the page cache does not serve their reads. A file larger than {@code
 * maxBytes} is never named, and holds back the files after it until the frontier passes it (its own
 * fetch reads it).
 *
 * <p>Memory: one entry per primary location of the shuffle on this worker (its key, file, bytes),
 * made at the first fetch after the commit and dropped with the shuffle.
 *
 * <p>Thread-safety: {@link #next} may be called from any thread (fetch event loops).
 */
public final class ReadAhead {
  /**
   * How much of a shuffle to read ahead of its reducers (faro.worker.read.ahead.files and .bytes).
   */
  public record Limits(int files, long bytes) {
    public static final Limits NONE = new Limits(0, 0);

    public Limits {
      if (files < 0 || bytes < 0) {
        throw new IllegalArgumentException("negative read-ahead: " + files + " files, " + bytes);
      }
    }
  }

  /** A file to read ahead: its data's length, and the reader of its disk. */
  public record Target(PartitionKey key, Path file, long bytes, DiskReader reader) {
    public Target {
      requireNonNull(key, "key is null");
      requireNonNull(file, "file is null");
      requireNonNull(reader, "reader is null");
    }
  }

  private static final Comparator<Target> ORDER =
      Comparator.comparingInt((Target t) -> t.key().partition())
          .thenComparingInt(t -> t.key().epoch());

  private final Target[] targets;
  // Of targets [0, i) on disks read through the page cache: their bytes, and how many.
  private final long[] bytesBefore;
  private final int[] filesBefore;

  // @GuardedBy("this"): the highest target fetched, and the last one named; -1 for none.
  private int frontier = -1;
  private int named = -1;

  /** A plan over {@code targets}, in any order. */
  public ReadAhead(List<Target> targets) {
    List<Target> sorted = new ArrayList<>(targets);
    sorted.sort(ORDER);
    this.targets = sorted.toArray(new Target[0]);
    this.bytesBefore = new long[this.targets.length + 1];
    this.filesBefore = new int[this.targets.length + 1];
    for (int i = 0; i < this.targets.length; i++) {
      boolean cached = this.targets[i].reader().readsThroughPageCache();
      bytesBefore[i + 1] = bytesBefore[i] + (cached ? this.targets[i].bytes() : 0);
      filesBefore[i + 1] = filesBefore[i] + (cached ? 1 : 0);
    }
  }

  /** Files in the plan. */
  public int size() {
    return targets.length;
  }

  /**
   * Moves the frontier to {@code fetched} if it is above it, and returns the files to read ahead
   * now (often none: those after the frontier were named already).
   */
  public synchronized List<Target> next(PartitionKey fetched, int maxFiles, long maxBytes) {
    int at = indexOf(fetched);
    if (at <= frontier) {
      return List.of(); // not in the plan (a replica, another disk), or behind the frontier
    }
    frontier = at;
    int from = Math.max(named, frontier) + 1;
    int to = from;
    while (to < targets.length
        && filesBefore[to + 1] - filesBefore[frontier + 1] <= maxFiles
        && bytesBefore[to + 1] - bytesBefore[frontier + 1] <= maxBytes) {
      to++;
    }
    if (to == from) {
      return List.of();
    }
    named = to - 1;
    List<Target> out = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      if (targets[i].reader().readsThroughPageCache()) {
        out.add(targets[i]);
      }
    }
    return out;
  }

  /** The index of {@code key} in the plan, or -1. */
  private int indexOf(PartitionKey key) {
    int low = 0;
    int high = targets.length - 1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      PartitionKey k = targets[mid].key();
      int c =
          k.partition() != key.partition()
              ? Integer.compare(k.partition(), key.partition())
              : Integer.compare(k.epoch(), key.epoch());
      if (c == 0) {
        return k.equals(key) ? mid : -1;
      }
      if (c < 0) {
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return -1;
  }
}
