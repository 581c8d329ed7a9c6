package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.batch.BatchFormat;
import io.faro.common.id.PartitionKey;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.replicate.ReplicaLink;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.DiskHealth;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives the pushed parts of one partition location, cuts its chunks and hands the parts to its
 * layout ({@link LocationLayout}: a file of its own, or its shuffle's runs).
 *
 * <p>Lifecycle: OPEN (appends buffer in memory; a full buffer goes to the flusher) -> COMMITTED
 * (the rest is flushed, the index and trailer written, the outcome kept for fetches) or SEALED (the
 * same file work, while the shuffle is still pushed: a graceful stop or a drain; later parts are
 * answered SPLIT so that their client moves on, and a commit answers the sealed file) or DISCARDED
 * (buffers released, file deleted when the shuffle expires or dropped on shutdown). SEALED may
 * still become COMMITTED: the outcome is the same file.
 *
 * <p>Chunks: the writer ends a chunk after the append that brings it to the chunk size. Boundaries
 * depend only on the sequence of appended part lengths and that size, so a replica fed the same
 * parts with its primary's chunk size (which the primary sends along) cuts the same chunks. Each
 * chunk also records the first and last map of its batches (read from the batch headers), for
 * readers of a map range.
 *
 * <p>A little over 400 lines, one job: the state machine above and chunk cutting share the one
 * lock, so they stay in one class; where the bytes go and when they are written is its {@link
 * LocationLayout}'s.
 *
 * <p>Threads: {@link #append} runs on push event loops, possibly several at once for one partition;
 * the state below is guarded by {@code this} and each critical section is a few field updates plus,
 * at most, handing a buffer list to the flusher's queue. The hand-over happens inside the lock so
 * flushes are queued in append order. What a layout writes, it writes on the disk's flusher
 * threads.
 */
public final class PartitionWriter {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionWriter.class);

  private enum State {
    OPEN,
    SEALED,
    COMMITTED,
    DISCARDED
  }

  private final PartitionKey key;
  private final Disk disk;
  private final int diskIndex;
  private final WriterSettings settings;
  // The link to this primary's replica; null for a replica or without replication.
  private final ReplicaLink replica;
  // Where the location's bytes go: a file of its own, or its shuffle's runs on the disk.
  private final LocationLayout layout;

  /** A pushed part and the charge of the frame it came in; released together. */
  record Part(ByteBuf bytes, FrameCharge charge) {
    void release() {
      bytes.release();
      charge.partReleased();
    }
  }

  // @GuardedBy("this") -----------------------------------------------------------------
  private State state = State.OPEN;
  private List<Part> pending = new ArrayList<>();
  private long pendingBytes;
  private long appendedBytes;
  private long chunkStart;
  private final List<Long> chunkEnds = new ArrayList<>();
  // The map range of each chunk ended, and of the one being filled (NO_MAP while it has none).
  private final List<Integer> chunkFirstMaps = new ArrayList<>();
  private final List<Integer> chunkLastMaps = new ArrayList<>();
  private int currentFirstMap = NO_MAP;
  private int currentLastMap = -1;
  private CompletableFuture<PartitionCommit> commit;
  // -------------------------------------------------------------------------------------

  // Set on the flush thread when a write fails; read by appends to answer SPLIT.
  private volatile boolean writeFailed;
  private volatile String writeFailedReason;
  // Set when the replica did not confirm a part (on a primary), or when a forwarded part was
  // refused (on a replica): later parts are refused, so that the replica stays a prefix of its
  // primary, without a hole.
  private volatile boolean stopped;

  public PartitionWriter(PartitionKey key, Disk disk, WriterSettings settings) {
    this(key, disk, settings, null);
  }

  /**
   * @param replica the link to this primary's replica, or null
   */
  public PartitionWriter(
      PartitionKey key, Disk disk, WriterSettings settings, ReplicaLink replica) {
    this(key, disk, settings, replica, null);
  }

  /**
   * @param runs the runs of the location's shuffle, role and disk, on a disk of the runs layout;
   *     null for a file of its own
   */
  PartitionWriter(
      PartitionKey key, Disk disk, WriterSettings settings, ReplicaLink replica, ShuffleRuns runs) {
    this.key = requireNonNull(key, "key is null");
    this.disk = requireNonNull(disk, "disk is null");
    if (runs != null && runs.disk() != disk) {
      throw new IllegalArgumentException("partition " + key + ": its runs are on another disk");
    }
    this.diskIndex = disk.index();
    this.settings = requireNonNull(settings, "settings is null");
    this.replica = replica;
    if (runs != null) {
      runs.register(this);
      this.layout = runs;
    } else {
      this.layout = new OwnFile(key, disk, settings);
    }
  }

  /** The link parts of this primary are forwarded on, if it has a replica. */
  public Optional<ReplicaLink> replica() {
    return Optional.ofNullable(replica);
  }

  /** The replica did not confirm a part: take no more data here. */
  public void replicaLost(String reason) {
    stopTakingData("its replica did not confirm a part: " + reason);
  }

  /**
   * This copy is a replica and refused a part its primary forwarded (its disk was briefly broken or
   * full): it must refuse every later part too, or it would have a hole where its primary has that
   * part, and chunk k would no longer hold the same batches on both copies.
   */
  public void forwardedPartRefused(String reason) {
    stopTakingData("it is a replica that refused a forwarded part: " + reason);
  }

  /** Whether the writer refuses every further part (a replica lost or a hole avoided). */
  public boolean stoppedTakingData() {
    return stopped;
  }

  private void stopTakingData(String why) {
    if (!stopped) {
      stopped = true;
      LOG.warn("Partition {} stops taking data: {}", key, why);
    }
  }

  public PartitionKey key() {
    return key;
  }

  public int diskIndex() {
    return diskIndex;
  }

  /** Whether the writer still takes data. */
  public synchronized boolean isOpen() {
    return state == State.OPEN;
  }

  /**
   * Appends one part (whole batches, already validated), cutting chunks by {@code chunkSize}: this
   * worker's for a part pushed to it, the primary's for a part forwarded to a replica. Takes
   * ownership of {@code part}: it is kept until flushed, or released here when not appended; either
   * way {@code charge} hears of its release.
   */
  public PushStatus append(ByteBuf part, FrameCharge charge, long chunkSize) {
    if (chunkSize <= 0) {
      part.release();
      charge.partReleased();
      throw new IllegalArgumentException("chunk size must be positive: " + chunkSize);
    }
    int length = part.readableBytes();
    long maps = mapRange(part);
    PushStatus status;
    synchronized (this) {
      status = admit();
      if (status == PushStatus.OK || status == PushStatus.SOFT_SPLIT) {
        pending.add(new Part(part, charge));
        pendingBytes += length;
        appendedBytes += length;
        currentFirstMap = Math.min(currentFirstMap, (int) (maps >>> 32));
        currentLastMap = Math.max(currentLastMap, (int) maps);
        if (appendedBytes - chunkStart >= chunkSize) {
          chunkEnds.add(appendedBytes);
          chunkStart = appendedBytes;
          endChunkMaps();
        }
        layout.added(this, length);
      }
    }
    if (status != PushStatus.OK && status != PushStatus.SOFT_SPLIT) {
      new Part(part, charge).release();
    }
    return status;
  }

  // @GuardedBy("this")
  private PushStatus admit() {
    return switch (state) {
      case COMMITTED -> PushStatus.STAGE_ENDED;
      // Everything acknowledged is in the sealed file; the rest goes to a new location.
      case SEALED -> PushStatus.SPLIT;
      case DISCARDED -> PushStatus.NOT_HERE;
      case OPEN -> {
        // A failed file would have a hole, a replica that missed a part too: move the client to
        // a new location instead.
        if (writeFailed || stopped || (replica != null && replica.failed())) {
          yield PushStatus.SPLIT;
        }
        // A full disk still has its reserve for what is in flight; a broken one takes nothing.
        DiskHealth.State diskState = disk.state();
        if (diskState != DiskHealth.State.HEALTHY) {
          yield diskState == DiskHealth.State.BROKEN || settings.hardSplit()
              ? PushStatus.SPLIT
              : PushStatus.SOFT_SPLIT;
        }
        if (appendedBytes >= settings.splitThreshold()) {
          yield settings.hardSplit() ? PushStatus.SPLIT : PushStatus.SOFT_SPLIT;
        }
        yield PushStatus.OK;
      }
    };
  }

  /** Hands whatever is buffered to the flusher, however little (memory relief). */
  public void flushBuffered() {
    layout.flushBuffered(this);
  }

  /**
   * Stops taking data and, on the flush thread, writes what is buffered, the index and the trailer.
   * Idempotent: every call returns the same future, also after {@link #seal} (the commit then
   * answers the sealed file).
   */
  public synchronized CompletableFuture<PartitionCommit> commit() {
    if (state == State.SEALED) {
      state = State.COMMITTED;
    }
    return finishOnce(State.COMMITTED);
  }

  /**
   * As {@link #commit}, while the shuffle is still pushed (a graceful stop, a drain): the file is
   * finished the same way, so that everything acknowledged so far is durable, but later parts are
   * answered SPLIT, not STAGE_ENDED: their clients move them to a new location and go on. A later
   * {@link #commit} answers the same outcome. Idempotent; after a commit it returns the commit's.
   */
  public synchronized CompletableFuture<PartitionCommit> seal() {
    return finishOnce(State.SEALED);
  }

  /** Whether {@link #seal} was called and no commit came since. */
  public synchronized boolean isSealed() {
    return state == State.SEALED;
  }

  // @GuardedBy("this")
  private CompletableFuture<PartitionCommit> finishOnce(State finished) {
    if (commit != null) {
      return commit;
    }
    if (state == State.DISCARDED) {
      commit =
          CompletableFuture.completedFuture(
              new PartitionCommit.Failed(key, "partition " + key + " was discarded"));
      return commit;
    }
    state = finished;
    List<Part> parts = pending;
    pending = new ArrayList<>();
    pendingBytes = 0;
    ChunkIndex chunks = chunkIndex();
    CompletableFuture<PartitionCommit> result = new CompletableFuture<>();
    commit = result;
    layout.finish(this, parts, chunks, result);
    return commit;
  }

  /** The commit's (or seal's) outcome, if one was started. */
  public synchronized Optional<CompletableFuture<PartitionCommit>> commitOutcome() {
    return Optional.ofNullable(commit);
  }

  /**
   * Stops taking data and releases what is buffered. What it wrote stays: {@link #deletion} says
   * how to delete it.
   */
  public void discard() {
    List<Part> dropped;
    synchronized (this) {
      state = State.DISCARDED;
      dropped = pending;
      pending = new ArrayList<>();
      layout.dropped(this, pendingBytes);
      pendingBytes = 0;
    }
    release(dropped);
  }

  /** How to delete what this (discarded) writer wrote, if its layout deletes per location. */
  Optional<LocationLayout.Deletion> deletion() {
    return layout.deletion(this);
  }

  // @GuardedBy("this")
  private ChunkIndex chunkIndex() {
    int extra = appendedBytes > chunkStart ? 1 : 0;
    long[] offsets = new long[1 + chunkEnds.size() + extra];
    int[] firstMaps = new int[chunkEnds.size() + extra];
    int[] lastMaps = new int[chunkEnds.size() + extra];
    for (int i = 0; i < chunkEnds.size(); i++) {
      offsets[i + 1] = chunkEnds.get(i);
      firstMaps[i] = chunkFirstMaps.get(i);
      lastMaps[i] = chunkLastMaps.get(i);
    }
    if (extra == 1) {
      offsets[offsets.length - 1] = appendedBytes;
      firstMaps[firstMaps.length - 1] = currentFirstMap == NO_MAP ? 0 : currentFirstMap;
      lastMaps[lastMaps.length - 1] = currentFirstMap == NO_MAP ? 0 : currentLastMap;
    }
    return ChunkIndex.of(offsets, firstMaps, lastMaps);
  }

  private static final int NO_MAP = Integer.MAX_VALUE;

  // @GuardedBy("this")
  private void endChunkMaps() {
    // A chunk of nothing but batches no reader keeps (negative map ids) gets [0, 0]: skipping it
    // or not changes nothing.
    boolean none = currentFirstMap == NO_MAP;
    chunkFirstMaps.add(none ? 0 : currentFirstMap);
    chunkLastMaps.add(none ? 0 : currentLastMap);
    currentFirstMap = NO_MAP;
    currentLastMap = -1;
  }

  /** Bytes of the parts not taken by the layout yet. */
  synchronized long pendingBytes() {
    return pendingBytes;
  }

  /** Takes the parts not written yet, for the layout to write. */
  synchronized List<Part> takePending() {
    if (pending.isEmpty()) {
      return List.of();
    }
    List<Part> parts = pending;
    pending = new ArrayList<>();
    pendingBytes = 0;
    return parts;
  }

  /** A write with parts of this location failed: take no more data here. */
  void stopOnWriteFailure(String why) {
    if (writeFailedReason == null) {
      writeFailedReason = why;
    }
    if (!writeFailed) {
      writeFailed = true;
      LOG.warn("Partition {} stops taking data: {}", key, why);
    }
  }

  /** Refuses every later part, quietly (the flushers are shutting down). */
  void refuseData() {
    writeFailed = true;
  }

  /** Whether a write of this location failed (its later parts are refused). */
  boolean writeFailed() {
    return writeFailed;
  }

  /** Why a write with parts of this location failed, or null. */
  String writeFailedReason() {
    return writeFailedReason;
  }

  /** Bytes this location took (appended, whether flushed yet or not). */
  synchronized long bytesTaken() {
    return appendedBytes;
  }

  /**
   * The smallest and the largest map index of the batches of {@code part} (validated: whole
   * batches), as {@code first << 32 | last}; negative ids (which no reader keeps) left out, and
   * {@code NO_MAP << 32 | -1} when none is left. Reads only the headers.
   */
  static long mapRange(ByteBuf part) {
    int first = NO_MAP;
    int last = -1;
    long pos = part.readerIndex();
    long end = part.writerIndex();
    while (end - pos >= BatchFormat.HEADER) {
      int mapId = part.getInt((int) pos + BatchFormat.MAP_ID);
      if (mapId >= 0) {
        first = Math.min(first, mapId);
        last = Math.max(last, mapId);
      }
      pos += BatchFormat.HEADER + Math.max(0, part.getInt((int) pos + BatchFormat.DATA_LENGTH));
    }
    return ((long) first << 32) | (last & 0xFFFFFFFFL);
  }

  static void release(List<Part> parts) {
    for (Part part : parts) {
      part.release();
    }
  }
}
