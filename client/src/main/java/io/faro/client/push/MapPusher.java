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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * Pushes the output of one map attempt. Record bytes gather per partition; {@link #cut} turns a
 * partition's bytes into one batch (compressed, checksummed, numbered), batches bound for the
 * same worker gather into one merged frame, and frames are pushed asynchronously with at most
 * {@code faro.client.push.max.in.flight} unanswered.
 *
 * <p>Threads: confined to the map task's thread, except the answer callbacks, which touch only
 * the in-flight semaphore and the first failure.
 */
public final class MapPusher implements AutoCloseable {
  private final ShuffleId shuffle;
  private final int mapId;
  private final int attemptId;
  private final PartitionLocation[] targets;
  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final BatchEncoder encoder;
  private final ByteBufAllocator allocator;

  private final byte[][] buffers;
  private final int initialCapacity;
  private final int[] buffered;
  private final long[] pushedBytes;
  private long totalBuffered;
  private long retainedCapacity;
  private int nextBatchId;
  private long blockedNanos;

  private final Map<WorkerId, PendingFrame> pending = new HashMap<>();
  private final Semaphore inFlight;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile LongConsumer pushAnswered = nanos -> { };
  private boolean closed;

  /** Batches gathered for one worker, not yet sent. Owns its buffers. */
  private static final class PendingFrame {
    final HostPort address;
    final List<PushPart> parts = new ArrayList<>();
    final List<ByteBuf> batches = new ArrayList<>();
    long bytes;

    PendingFrame(HostPort address) {
      this.address = address;
    }
  }

  public MapPusher(ShuffleId shuffle, int mapId, int attemptId, List<PartitionLocation> locations,
      int numPartitions, ClientPool pool, ClientOptions.Settings settings, ByteBufAllocator allocator) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.mapId = mapId;
    this.attemptId = attemptId;
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.allocator = requireNonNull(allocator, "allocator is null");
    this.targets = new PartitionLocation[numPartitions];
    for (PartitionLocation l : locations) {
      if (l.partition() < numPartitions) {
        targets[l.partition()] = l;
      }
    }
    for (int p = 0; p < numPartitions; p++) {
      if (targets[p] == null) {
        throw new FaroException(ErrorCode.INTERNAL, "shuffle " + shuffle + " has no location for partition " + p);
      }
    }
    this.encoder = new BatchEncoder(settings.compress(), allocator);
    this.buffers = new byte[numPartitions][];
    // Small first arrays when there are many partitions: their sum must stay within the limit.
    this.initialCapacity = (int) Math.max(256, Math.min(4096, settings.bufferSize() / Math.max(1, numPartitions)));
    this.buffered = new int[numPartitions];
    this.pushedBytes = new long[numPartitions];
    this.inFlight = new Semaphore(settings.maxInFlight());
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
    return targets.length;
  }

  /** Makes one batch of {@code partition}'s gathered bytes and queues it for its worker. */
  public void cut(int partition) {
    // Checked per batch, not per record: a failed push only matters once there is more to send.
    checkFailure();
    int size = buffered[partition];
    if (size == 0) {
      return;
    }
    ByteBuf batch = encoder.encode(mapId, attemptId, nextBatchId++, buffers[partition], 0, size);
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
    PartitionLocation target = targets[partition];
    PendingFrame frame = pending.computeIfAbsent(target.worker(),
        w -> new PendingFrame(new HostPort(target.endpoint().host(), target.endpoint().pushPort())));
    frame.parts.add(PushPart.newBuilder().setPartitionId(partition).setEpoch(target.epoch())
        .setLength(batch.readableBytes()).build());
    frame.batches.add(batch);
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
   * {@link #close()} releases it) until a permit is held: waiting for one may fail.
   */
  private void send(WorkerId worker) {
    acquire(1);
    PendingFrame frame = pending.remove(worker);
    if (frame == null) {
      inFlight.release();
      return;
    }
    PushRequest meta = PushRequest.newBuilder().setShuffle(IdMapper.toProto(shuffle))
        .addAllParts(frame.parts).build();
    CompositeByteBuf body = allocator.compositeDirectBuffer(frame.batches.size());
    for (ByteBuf b : frame.batches) {
      body.addComponent(true, b);
    }
    long sentAt = System.nanoTime();
    pool.send(frame.address, meta, body, settings.network().requestTimeout())
        .whenComplete((answer, error) -> {
          try {
            if (error != null) {
              failure.compareAndSet(null, new FaroException(ErrorCode.CONNECTION_FAILED,
                  "push of map " + mapId + " attempt " + attemptId + " of shuffle " + shuffle + " to "
                      + frame.address + " failed: " + Futures.unwrap(error).getMessage(), Futures.unwrap(error)));
            } else {
              checkStatuses(frame, answer.meta(PushResponse.class));
              reportLatency(System.nanoTime() - sentAt);
            }
          } catch (RuntimeException e) {
            // Nobody reads this future: an unexpected answer must fail the task, not vanish.
            failure.compareAndSet(null, e);
          } finally {
            if (answer != null) {
              answer.release();
            }
            inFlight.release();
          }
        });
  }

  private void checkStatuses(PendingFrame frame, PushResponse response) {
    for (int i = 0; i < frame.parts.size(); i++) {
      PushStatusP status = i < response.getStatusesCount() ? response.getStatuses(i) : PushStatusP.PUSH_STATUS_UNSPECIFIED;
      switch (status) {
        case OK, SLOW_DOWN, STAGE_ENDED -> { } // STAGE_ENDED: another attempt already won this map
        default -> failure.compareAndSet(null, new FaroException(ErrorCode.UNKNOWN_PARTITION,
            "worker " + frame.address + " answered " + status + " for partition "
                + frame.parts.get(i).getPartitionId() + " epoch " + frame.parts.get(i).getEpoch()
                + " of shuffle " + shuffle + " (map " + mapId + " attempt " + attemptId + "): "
                + (status == PushStatusP.NOT_HERE
                    ? "the worker does not hold that partition (it restarted, or the shuffle expired)"
                    : "the partition's file on that worker failed")
                + "; this version of Faro cannot move a partition to another worker, so the task fails"));
      }
    }
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
    for (WorkerId worker : new ArrayList<>(pending.keySet())) {
      send(worker);
    }
    acquire(settings.maxInFlight());
    inFlight.release(settings.maxInFlight());
    checkFailure();
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
      frame.batches.forEach(ByteBuf::release);
    }
    pending.clear();
  }
}
