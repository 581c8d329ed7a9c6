package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.MapAttempt;
import io.faro.common.batch.BatchEncoder;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.Optional;
import java.util.function.LongConsumer;
import java.util.stream.IntStream;

/**
 * Pushes the output of one map attempt. Record bytes gather per partition ({@link
 * PartitionBuffers}); {@link #cut} turns a partition's bytes into one batch (compressed,
 * checksummed, numbered); batches bound for the same worker gather into one merged frame, and
 * frames are pushed asynchronously with at most {@code faro.client.push.max.in.flight} unanswered,
 * fewer to a worker that answers SLOW_DOWN ({@link PushWindow}).
 *
 * <p>Revive: a batch is kept until its worker acknowledged it. A batch whose push failed (the
 * connection was lost or timed out, the location refused it with SPLIT, its replica did not confirm
 * it) is pushed again, as the same batch, to the partition's new location, which the {@link
 * Reviver} gets from the lifecycle manager ({@link Revivals}); a SOFT_SPLIT moves only the
 * partition's later batches. The reader keeps each batch once, wherever it landed.
 *
 * <p>Threads: confined to the map task's thread, except the answer callbacks (see {@link
 * PushWindow}).
 */
public final class MapPusher implements AutoCloseable {
  /** Gets new locations for partitions whose push failed; a blocking call on the task's thread. */
  @FunctionalInterface
  public interface Reviver {
    /** The new (or already newer) location of each partition, in request order. */
    List<PartitionLocation> revive(List<Failed> failed);
  }

  /**
   * A partition whose push to {@code epoch} failed; {@code worker} is set when the worker failed.
   */
  public record Failed(int partition, int epoch, Optional<WorkerId> worker) {}

  /** Room in a frame for its header and the push request's meta besides one batch. */
  private static final int FRAME_HEADROOM = 64 * 1024;

  private final ShuffleId shuffle;
  private final int mapId;
  private final int attemptId;
  private final Targets targets;
  private final ClientSettings settings;
  private final BatchEncoder encoder;
  private final PartitionBuffers buffers;
  private final Revivals revivals;
  private final PushWindow window;
  private final long[] pushedBytes;

  /** Batches cut per partition: each is acknowledged before finish() returns, or the task fails. */
  private final int[] batchCounts;

  private int nextBatchId;
  private boolean closed;

  /** A pusher that cannot revive: a failed push fails the task (tests, tools). */
  public MapPusher(
      ShuffleId shuffle,
      MapAttempt attempt,
      List<PartitionLocation> locations,
      int numPartitions,
      ClientPool pool,
      ClientSettings settings,
      ByteBufAllocator allocator) {
    this(
        shuffle,
        attempt,
        Targets.of(shuffle, locations, numPartitions),
        failed -> {
          throw new FaroException(
              ErrorCode.CONNECTION_FAILED, "this pusher cannot move partitions " + failed);
        },
        pool,
        settings,
        allocator);
  }

  /**
   * @param targets the current location of every partition, shared with the executor's other tasks
   *     of this shuffle: a revive by one task moves them all; a page of them is asked for when the
   *     first batch of one of its partitions is cut
   */
  public MapPusher(
      ShuffleId shuffle,
      MapAttempt attempt,
      Targets targets,
      Reviver reviver,
      ClientPool pool,
      ClientSettings settings,
      ByteBufAllocator allocator) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.mapId = attempt.mapId();
    this.attemptId = attempt.attemptId();
    this.targets = requireNonNull(targets, "targets is null");
    this.settings = requireNonNull(settings, "settings is null");
    int numPartitions = targets.numPartitions();
    requireNonNull(allocator, "allocator is null");
    this.buffers = new PartitionBuffers(numPartitions, settings.bufferSize(), settings.batchSize());
    this.revivals = new Revivals(shuffle, attempt, settings.reviveMaxAttempts(), reviver, targets);
    this.window = new PushWindow(shuffle, attempt, pool, settings, allocator, revivals);
    this.pushedBytes = new long[numPartitions];
    this.batchCounts = new int[numPartitions];
    // Last: a ZSTD encoder holds a native context, which only close() frees.
    this.encoder = new BatchEncoder(settings.codec(), settings.zstdLevel(), allocator);
  }

  /** Appends record bytes to {@code partition}; the caller cuts batches only at record ends. */
  public void write(int partition, byte[] bytes, int offset, int length) {
    buffers.write(partition, bytes, offset, length);
  }

  /** Appends one byte to {@code partition}. */
  public void write(int partition, int b) {
    buffers.write(partition, b);
  }

  public int buffered(int partition) {
    return buffers.buffered(partition);
  }

  public long totalBuffered() {
    return buffers.totalBuffered();
  }

  /**
   * Whether the task holds as much as {@code faro.client.push.buffer.size}, counting both the
   * record bytes gathered and the arrays allocated for them; the caller then cuts every partition
   * ({@link #cutAll}), which also frees arrays beyond the limit.
   */
  public boolean overBufferLimit() {
    return buffers.overLimit();
  }

  public int batchSize() {
    return settings.batchSize();
  }

  public long bufferLimit() {
    return settings.bufferSize();
  }

  public int numPartitions() {
    return targets.numPartitions();
  }

  /** Makes one batch of {@code partition}'s gathered bytes and queues it for its worker. */
  public void cut(int partition) {
    // Checked per batch, not per record: a failed push only matters once there is more to send.
    window.checkFailure();
    if (!revivals.isEmpty()) {
      reviveAndRequeue();
    }
    int size = buffers.buffered(partition);
    if (size == 0) {
      return;
    }
    // First, before anything is encoded: the page of a partition not pushed to yet is asked for.
    PartitionLocation target = targets.get(partition);
    ByteBuf batch =
        encoder.encode(mapId, attemptId, nextBatchId++, buffers.array(partition), 0, size);
    // A batch travels whole in one frame; one that cannot (a giant record) would make the worker
    // close the connection every task of this executor shares. Refuse it here, saying why.
    if (batch.readableBytes() > settings.network().maxFrameSize() - FRAME_HEADROOM) {
      int encoded = batch.readableBytes();
      batch.release();
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED,
          "a batch of partition "
              + partition
              + " of map "
              + mapId
              + " of shuffle "
              + shuffle
              + " is "
              + encoded
              + " bytes ("
              + size
              + " bytes of records), more than"
              + " one frame carries: raise faro.network.max.frame.size (now "
              + settings.network().maxFrameSize()
              + ") on the workers and the job, or make the largest record smaller");
    }
    buffers.cleared(partition);
    pushedBytes[partition] += batch.readableBytes();
    batchCounts[partition]++;
    window.add(new PushedBatch(partition, target, batch, 0));
  }

  /** Cuts every partition that holds bytes. */
  public void cutAll() {
    // The locations of every page these partitions fall in, asked for at once, not page by page.
    targets.prefetch(
        IntStream.range(0, buffers.numPartitions()).filter(p -> buffers.buffered(p) > 0));
    for (int p = 0; p < buffers.numPartitions(); p++) {
      cut(p);
    }
  }

  /**
   * Moves the partitions that failed or split, then queues every failed batch again, to its
   * partition's new location. On the task's thread.
   */
  private void reviveAndRequeue() {
    List<PushedBatch> again = revivals.revive();
    for (int i = 0; i < again.size(); i++) {
      try {
        window.add(again.get(i));
      } catch (RuntimeException e) {
        // Sending a full frame failed (no answer in time): the batches not queued yet are ours.
        again.subList(i + 1, again.size()).forEach(x -> x.batch().release());
        throw e;
      }
    }
  }

  /**
   * Pushes everything still gathered and waits until every push is answered. Throws the first push
   * failure.
   */
  public void finish() {
    cutAll();
    while (true) {
      window.sendAll();
      window.awaitAnswers();
      if (!revivals.hasRetries()) {
        // Soft splits only move later batches: there are none.
        revivals.dropSoftSplits();
        return;
      }
      reviveAndRequeue();
    }
  }

  /** Partitions this pusher asked new locations for (revives and splits). */
  public long revives() {
    return revivals.revived();
  }

  /** Hears the latency of every answered push, on a network thread: keep it cheap. */
  public void onPushAnswered(LongConsumer listener) {
    window.onPushAnswered(listener);
  }

  /**
   * Time this task spent waiting for pushes to be answered (Spark's shuffle write time), {@link
   * #backOffNanos()} included.
   */
  public long blockedNanos() {
    return window.blockedNanos();
  }

  /**
   * Push answers in which a worker asked this task to slow down (SLOW_DOWN: the data it holds in
   * memory is above its slow-down mark). The batches were kept; the task sent that worker fewer
   * frames at once.
   */
  public long slowDowns() {
    return window.slowDowns();
  }

  /**
   * Time this task waited for room in the push window of a worker that asked it to slow down; part
   * of {@link #blockedNanos()}.
   */
  public long backOffNanos() {
    return window.backOffNanos();
  }

  /**
   * Whether some batch was refused because the shuffle was already committed (STAGE_ENDED): this
   * attempt's output is incomplete and must never win its map (see mapper end).
   */
  public boolean incomplete() {
    return window.incomplete();
  }

  /**
   * Batches pushed per partition (each acknowledged once {@link #finish} returned), for mapper end:
   * readers check that they read exactly these of the winning attempt.
   */
  public int[] batchCounts() {
    return batchCounts.clone();
  }

  /** Pushed bytes per partition (as stored, with batch headers), for the engine's map status. */
  public long[] partitionLengths() {
    return pushedBytes.clone();
  }

  /** Drops whatever was not pushed; used when the task fails. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      window.close();
      // Batches still in flight are released by their answers; failed ones wait here.
      revivals.releaseAll();
    } finally {
      encoder.close();
    }
  }
}
