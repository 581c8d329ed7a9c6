package io.faro.client.push;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.common.id.IdMapper;
import io.faro.common.batch.BatchEncoder;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionLocation;
import io.faro.common.id.ShuffleId;
import io.faro.common.id.WorkerId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.faro.common.network.RemoteException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * Pushes the output of one map attempt. Record bytes gather per partition; {@link #cut} turns a
 * partition's bytes into one batch (compressed, checksummed, numbered), batches bound for the
 * same worker gather into one merged frame, and frames are pushed asynchronously with at most
 * {@code faro.client.push.max.in.flight} unanswered.
 *
 * <p>Revive: a batch is kept until its worker acknowledged it. A batch whose push failed (the
 * connection was lost or timed out, the location refused it with SPLIT, its replica did not
 * confirm it) is pushed again, as the same batch, to the partition's new location, which the
 * {@link Reviver} gets from the lifecycle manager; a SOFT_SPLIT moves only the partition's later
 * batches. The reader keeps each batch once, wherever it landed.
 *
 * <p>Threads: confined to the map task's thread, except the answer callbacks, which touch only
 * the in-flight semaphore, the queues of batches to push again and the first failure.
 *
 * <p>Over 400 lines, knowingly: buffers and accounting, frame merging with the in-flight window, and the revive queue part into three in the issue "Room to grow", taken next.
 */
public final class MapPusher implements AutoCloseable {
  /** Gets new locations for partitions whose push failed; a blocking call on the task's thread. */
  @FunctionalInterface
  public interface Reviver {
    /** The new (or already newer) location of each partition, in request order. */
    List<PartitionLocation> revive(List<Failed> failed);
  }

  /** A partition whose push to {@code epoch} failed; {@code worker} is set when the worker failed. */
  public record Failed(int partition, int epoch, Optional<WorkerId> worker) {}

  /** A pushed batch, kept until acknowledged. */
  private record Pushed(int partition, PartitionLocation target, ByteBuf batch, int attempts) {}

  /** A batch to push again: {@code cause} says why, {@code worker} the worker that failed, if it did. */
  private record Retry(Pushed pushed, String cause, Optional<WorkerId> worker) {}

  /** Room in a frame for its header and the push request's meta besides one batch. */
  private static final int FRAME_HEADROOM = 64 * 1024;

  private final ShuffleId shuffle;
  private final int mapId;
  private final int attemptId;
  private final AtomicReferenceArray<PartitionLocation> targets;
  private final Reviver reviver;
  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final BatchEncoder encoder;
  private final ByteBufAllocator allocator;

  private final byte[][] buffers;
  private final int initialCapacity;
  private final int[] buffered;
  private final long[] pushedBytes;
  /** Batches cut per partition: each is acknowledged before finish() returns, or the task fails. */
  private final int[] batchCounts;
  private long totalBuffered;
  private long retainedCapacity;
  private int nextBatchId;
  private long blockedNanos;
  private long revives;

  private final Map<WorkerId, PendingFrame> pending = new HashMap<>();
  private final Semaphore inFlight;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final Queue<Retry> retries = new ConcurrentLinkedQueue<>();
  private final Queue<PartitionLocation> softSplits = new ConcurrentLinkedQueue<>();
  private volatile LongConsumer pushAnswered = nanos -> { };
  // Set by an answer callback when a batch was refused because the shuffle was committed.
  private volatile boolean incomplete;
  private volatile boolean closed;

  /** Batches gathered for one worker, not yet sent. Owns its batches. */
  private static final class PendingFrame {
    final HostPort address;
    final List<Pushed> parts = new ArrayList<>();
    long bytes;

    PendingFrame(HostPort address) {
      this.address = address;
    }
  }

  /** A pusher that cannot revive: a failed push fails the task (tests, tools). */
  public MapPusher(ShuffleId shuffle, int mapId, int attemptId, List<PartitionLocation> locations,
      int numPartitions, ClientPool pool, ClientOptions.Settings settings, ByteBufAllocator allocator) {
    this(shuffle, mapId, attemptId, targets(shuffle, locations, numPartitions), failed -> {
      throw new FaroException(ErrorCode.CONNECTION_FAILED, "this pusher cannot move partitions " + failed);
    }, pool, settings, allocator);
  }

  /**
   * @param targets the current location of every partition, shared with the executor's other
   *     tasks of this shuffle: a revive by one task moves them all
   */
  public MapPusher(ShuffleId shuffle, int mapId, int attemptId, AtomicReferenceArray<PartitionLocation> targets,
      Reviver reviver, ClientPool pool, ClientOptions.Settings settings, ByteBufAllocator allocator) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.mapId = mapId;
    this.attemptId = attemptId;
    this.targets = requireNonNull(targets, "targets is null");
    this.reviver = requireNonNull(reviver, "reviver is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.allocator = requireNonNull(allocator, "allocator is null");
    int numPartitions = targets.length();
    for (int p = 0; p < numPartitions; p++) {
      if (targets.get(p) == null) {
        throw new FaroException(ErrorCode.INTERNAL, "shuffle " + shuffle + " has no location for partition " + p);
      }
    }
    this.encoder = new BatchEncoder(settings.compress(), allocator);
    this.buffers = new byte[numPartitions][];
    // Small first arrays when there are many partitions: their sum must stay within the limit.
    this.initialCapacity = (int) Math.max(256, Math.min(4096, settings.bufferSize() / Math.max(1, numPartitions)));
    this.buffered = new int[numPartitions];
    this.pushedBytes = new long[numPartitions];
    this.batchCounts = new int[numPartitions];
    this.inFlight = new Semaphore(settings.maxInFlight());
  }

  /** The locations as a target array of {@code numPartitions} (extra ones ignored). */
  public static AtomicReferenceArray<PartitionLocation> targets(ShuffleId shuffle, List<PartitionLocation> locations,
      int numPartitions) {
    AtomicReferenceArray<PartitionLocation> targets = new AtomicReferenceArray<>(numPartitions);
    for (PartitionLocation l : locations) {
      if (l.partition() < numPartitions) {
        targets.set(l.partition(), l);
      }
    }
    return targets;
  }

  /** Appends record bytes to {@code partition}; the caller cuts batches only at record ends. */
  public void write(int partition, byte[] bytes, int offset, int length) {
    byte[] buffer = reserve(partition, length);
    System.arraycopy(bytes, offset, buffer, buffered[partition], length);
    buffered[partition] += length;
    totalBuffered += length;
  }

  /** Appends one byte to {@code partition}. */
  public void write(int partition, int b) {
    byte[] buffer = reserve(partition, 1);
    buffer[buffered[partition]++] = (byte) b;
    totalBuffered++;
  }

  /** The partition's buffer, grown to take {@code length} more bytes. */
  private byte[] reserve(int partition, int length) {
    int size = buffered[partition];
    byte[] buffer = buffers[partition];
    if (buffer == null || buffer.length - size < length) {
      int capacity = Math.max(Math.max(size + length, initialCapacity), buffer == null ? 0 : buffer.length * 2);
      byte[] grown = new byte[capacity];
      if (buffer != null) {
        System.arraycopy(buffer, 0, grown, 0, size);
        retainedCapacity -= buffer.length;
      }
      retainedCapacity += capacity;
      buffers[partition] = buffer = grown;
    }
    return buffer;
  }

  public int buffered(int partition) {
    return buffered[partition];
  }

  public long totalBuffered() {
    return totalBuffered;
  }

  /**
   * Whether the task holds as much as {@code faro.client.push.buffer.size}, counting both the
   * record bytes gathered and the arrays allocated for them; the caller then cuts every
   * partition ({@link #cutAll}), which also frees arrays beyond the limit.
   */
  public boolean overBufferLimit() {
    return totalBuffered >= settings.bufferSize() || retainedCapacity >= settings.bufferSize();
  }

  public int batchSize() {
    return settings.batchSize();
  }

  public long bufferLimit() {
    return settings.bufferSize();
  }

  public int numPartitions() {
    return targets.length();
  }

  /** Makes one batch of {@code partition}'s gathered bytes and queues it for its worker. */
  public void cut(int partition) {
    // Checked per batch, not per record: a failed push only matters once there is more to send.
    checkFailure();
    if (!retries.isEmpty() || !softSplits.isEmpty()) {
      reviveAndRequeue();
    }
    int size = buffered[partition];
    if (size == 0) {
      return;
    }
    ByteBuf batch = encoder.encode(mapId, attemptId, nextBatchId++, buffers[partition], 0, size);
    // A batch travels whole in one frame; one that cannot (a giant record) would make the worker
    // close the connection every task of this executor shares. Refuse it here, saying why.
    if (batch.readableBytes() > settings.network().maxFrameSize() - FRAME_HEADROOM) {
      int encoded = batch.readableBytes();
      batch.release();
      throw new FaroException(ErrorCode.LIMIT_EXCEEDED, "a batch of partition " + partition + " of map " + mapId
          + " of shuffle " + shuffle + " is " + encoded + " bytes (" + size + " bytes of records), more than"
          + " one frame carries: raise faro.network.max.frame.size (now " + settings.network().maxFrameSize()
          + ") on the workers and the job, or make the largest record smaller");
    }
    buffered[partition] = 0;
    totalBuffered -= size;
    if (retainedCapacity > settings.bufferSize() / 2 || buffers[partition].length > 2 * settings.batchSize()) {
      // Keep arrays for reuse only while all of them fit in half of faro.client.push.buffer.size
      // (the other half is room to gather before overBufferLimit() asks for the next cutAll), and
      // never one a giant record grew: memory must not grow with the number of partitions.
      retainedCapacity -= buffers[partition].length;
      buffers[partition] = null;
    }
    pushedBytes[partition] += batch.readableBytes();
    batchCounts[partition]++;
    queue(partition, batch, 0);
  }

  /** Queues {@code batch} for the partition's current location; sends the frame once it is full. */
  private void queue(int partition, ByteBuf batch, int attempts) {
    PartitionLocation target = targets.get(partition);
    PendingFrame frame = pending.computeIfAbsent(target.worker(),
        w -> new PendingFrame(new HostPort(target.endpoint().host(), target.endpoint().pushPort())));
    frame.parts.add(new Pushed(partition, target, batch, attempts));
    frame.bytes += batch.readableBytes();
    if (frame.bytes >= settings.mergeSize()) {
      send(target.worker());
    }
  }

  /** Cuts every partition that holds bytes. */
  public void cutAll() {
    for (int p = 0; p < buffered.length; p++) {
      cut(p);
    }
  }

  /**
   * Sends the frame gathered for {@code worker}. The frame stays in {@link #pending} (so that
   * {@link #close()} releases it) until a permit is held: waiting for one may fail. Its batches
   * stay held until the worker acknowledges them.
   */
  private void send(WorkerId worker) {
    acquire(1);
    PendingFrame frame = pending.remove(worker);
    if (frame == null) {
      inFlight.release();
      return;
    }
    PushRequest.Builder meta = PushRequest.newBuilder().setShuffle(IdMapper.toProto(shuffle));
    CompositeByteBuf body = allocator.compositeDirectBuffer(frame.parts.size());
    for (Pushed p : frame.parts) {
      meta.addParts(PushPart.newBuilder().setPartitionId(p.partition()).setEpoch(p.target().epoch())
          .setLength(p.batch().readableBytes()));
      body.addComponent(true, p.batch().retainedDuplicate());
    }
    long sentAt = System.nanoTime();
    pool.send(frame.address, meta.build(), body, settings.network().requestTimeout())
        .whenComplete((answer, error) -> {
          try {
            if (error != null) {
              Throwable cause = Futures.unwrap(error);
              String why = "push to " + frame.address + " failed: " + cause.getMessage();
              // A worker that answered with an error is alive; one that did not answer is suspect.
              Optional<WorkerId> failed = cause instanceof RemoteException ? Optional.empty() : Optional.of(worker);
              frame.parts.forEach(p -> retries.add(new Retry(p, why, failed)));
            } else {
              PushResponse response;
              try {
                response = answer.meta(PushResponse.class);
              } catch (RuntimeException e) {
                // Not an answer to a push: nothing is known to be kept, push it all again.
                String why = "push to " + frame.address + " got an unexpected answer: " + e.getMessage();
                frame.parts.forEach(p -> retries.add(new Retry(p, why, Optional.empty())));
                return;
              }
              handleStatuses(frame, response);
              reportLatency(System.nanoTime() - sentAt);
            }
          } catch (RuntimeException e) {
            // Nobody reads this future: an unexpected answer must fail the task, not vanish.
            failure.compareAndSet(null, e);
          } finally {
            if (answer != null) {
              answer.release();
            }
            if (closed) {
              releaseRetries(); // the task is gone: nothing will push these again
            }
            inFlight.release();
          }
        });
  }

  private void releaseRetries() {
    for (Retry r; (r = retries.poll()) != null; ) {
      r.pushed().batch().release();
    }
  }

  /** Releases acknowledged batches; queues the others to be pushed again after a revive. */
  private void handleStatuses(PendingFrame frame, PushResponse response) {
    for (int i = 0; i < frame.parts.size(); i++) {
      Pushed p = frame.parts.get(i);
      PushStatusP status = i < response.getStatusesCount() ? response.getStatuses(i) : PushStatusP.PUSH_STATUS_UNSPECIFIED;
      switch (status) {
        case OK, SLOW_DOWN -> p.batch().release();
        case STAGE_ENDED -> {
          // The shuffle was committed while this attempt still pushes (a speculative copy, or a
          // task the engine ran again after losing an executor): the batch is in no file. Another
          // attempt of this map won already; mapper end says this one is incomplete, so that it
          // can never win with data no file holds.
          p.batch().release();
          incomplete = true;
        }
        case SOFT_SPLIT -> {
          p.batch().release();
          softSplits.add(p.target());
        }
        default -> retries.add(new Retry(p, "worker " + frame.address + " answered " + status
            + " for partition " + p.partition() + " epoch " + p.target().epoch(), Optional.empty()));
      }
    }
  }

  /**
   * Asks for new locations of the partitions that failed or split, then queues every failed
   * batch again, to its partition's new location. On the task's thread.
   */
  private void reviveAndRequeue() {
    List<Retry> failed = new ArrayList<>();
    for (Retry r; (r = retries.poll()) != null; ) {
      failed.add(r);
    }
    List<PartitionLocation> split = new ArrayList<>();
    for (PartitionLocation l; (l = softSplits.poll()) != null; ) {
      split.add(l);
    }
    // One request per partition, for the newest epoch that failed; none when another task of
    // this executor already moved the partition past it.
    Map<Integer, Failed> ask = new LinkedHashMap<>();
    for (Retry r : failed) {
      if (r.pushed().attempts() + 1 > settings.reviveMaxAttempts()) {
        failed.forEach(x -> x.pushed().batch().release());
        throw new FaroException(ErrorCode.CONNECTION_FAILED, "batch of partition " + r.pushed().partition()
            + " of map " + mapId + " attempt " + attemptId + " of shuffle " + shuffle + " was pushed "
            + (r.pushed().attempts() + 1) + " times without success (faro.client.push.revive.max.attempts "
            + settings.reviveMaxAttempts() + "); last: " + r.cause());
      }
      need(ask, r.pushed().target(), r.worker());
    }
    split.forEach(l -> need(ask, l, Optional.empty()));
    if (!ask.isEmpty()) {
      List<Failed> request = List.copyOf(ask.values());
      List<PartitionLocation> moved;
      try {
        moved = reviver.revive(request);
      } catch (RuntimeException e) {
        failed.forEach(x -> x.pushed().batch().release());
        String cause = failed.isEmpty() ? "" : " after: " + failed.get(0).cause();
        throw new FaroException(e instanceof FaroException fe ? fe.code() : ErrorCode.INTERNAL,
            "cannot move partitions of map " + mapId + " attempt " + attemptId + " of shuffle " + shuffle
                + " to new locations" + cause + ": " + e.getMessage(), e);
      }
      revives += request.size();
      for (PartitionLocation l : moved) {
        targets.accumulateAndGet(l.partition(), l, (old, next) -> old == null || old.epoch() < next.epoch() ? next : old);
      }
    }
    for (int i = 0; i < failed.size(); i++) {
      Retry r = failed.get(i);
      try {
        queue(r.pushed().partition(), r.pushed().batch(), r.pushed().attempts() + 1);
      } catch (RuntimeException e) {
        // Sending a full frame failed (no answer in time): the batches not queued yet are ours.
        failed.subList(i + 1, failed.size()).forEach(x -> x.pushed().batch().release());
        throw e;
      }
    }
  }

  private void need(Map<Integer, Failed> ask, PartitionLocation failedAt, Optional<WorkerId> worker) {
    PartitionLocation now = targets.get(failedAt.partition());
    if (now.epoch() > failedAt.epoch()) {
      return; // already moved on
    }
    ask.merge(failedAt.partition(), new Failed(failedAt.partition(), failedAt.epoch(), worker),
        (a, b) -> a.worker().isPresent() ? a : b);
  }

  private void acquire(int permits) {
    long start = System.nanoTime();
    try {
      boolean acquired = inFlight.tryAcquire(permits, settings.network().requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
      blockedNanos += System.nanoTime() - start;
      if (!acquired) {
        throw new FaroException(ErrorCode.TIMEOUT, "pushes of map " + mapId + " attempt " + attemptId
            + " of shuffle " + shuffle + " got no answer within " + settings.network().requestTimeout().toMillis()
            + "ms (faro.network.request.timeout)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaroException(ErrorCode.INTERNAL, "interrupted while pushing map " + mapId + " of " + shuffle, e);
    }
    try {
      checkFailure();
    } catch (RuntimeException e) {
      inFlight.release(permits);
      throw e;
    }
  }

  private void checkFailure() {
    Throwable t = failure.get();
    if (t != null) {
      throw t instanceof FaroException fe ? fe : new FaroException(ErrorCode.INTERNAL, t.toString(), t);
    }
  }

  /**
   * Pushes everything still gathered and waits until every push is answered. Throws the first
   * push failure.
   */
  public void finish() {
    cutAll();
    while (true) {
      for (WorkerId worker : new ArrayList<>(pending.keySet())) {
        send(worker);
      }
      acquire(settings.maxInFlight());
      inFlight.release(settings.maxInFlight());
      checkFailure();
      if (retries.isEmpty()) {
        // Soft splits only move later batches: there are none.
        softSplits.clear();
        return;
      }
      reviveAndRequeue();
    }
  }

  /** Partitions this pusher asked new locations for (revives and splits). */
  public long revives() {
    return revives;
  }

  private void reportLatency(long nanos) {
    try {
      pushAnswered.accept(nanos);
    } catch (RuntimeException e) {
      // A listener's failure says nothing about the push, which succeeded.
    }
  }

  /** Hears the latency of every answered push, on a network thread: keep it cheap. */
  public void onPushAnswered(LongConsumer listener) {
    pushAnswered = requireNonNull(listener, "listener is null");
  }

  /** Time this task spent waiting for pushes to be answered (Spark's shuffle write time). */
  public long blockedNanos() {
    return blockedNanos;
  }

  /**
   * Whether some batch was refused because the shuffle was already committed (STAGE_ENDED): this
   * attempt's output is incomplete and must never win its map (see mapper end).
   */
  public boolean incomplete() {
    return incomplete;
  }

  /**
   * Batches pushed per partition (each acknowledged once {@link #finish} returned), for mapper
   * end: readers check that they read exactly these of the winning attempt.
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
    for (PendingFrame frame : pending.values()) {
      frame.parts.forEach(p -> p.batch().release());
    }
    pending.clear();
    // Batches still in flight are released by their answers; failed ones wait here.
    releaseRetries();
  }
}
