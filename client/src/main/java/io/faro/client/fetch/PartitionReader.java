package io.faro.client.fetch;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.common.id.IdMapper;
import io.faro.client.lifecycle.ReducerFileGroups;
import io.faro.client.lifecycle.ReducerFileGroups.CommittedFile;
import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchDecoder;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.proto.FetchChunkRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Reads partitions {@code [startPartition, endPartition)} of a committed shuffle, keeping only
 * maps {@code [startMap, endMap)}: fetches each file chunk by chunk in order, with up to {@code
 * faro.client.fetch.prefetch.chunks} requests ahead, verifies every batch's checksum, and
 * returns exactly the batches of each map's winning attempt, each batchId once.
 *
 * <p>Confined to the reducer's thread. Each returned batch is valid until the next call.
 */
public final class PartitionReader implements AutoCloseable {
  private final ShuffleId shuffle;
  private final ReducerFileGroups groups;
  private final int startMap;
  private final int endMap;
  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final BatchDecoder decoder = new BatchDecoder();
  private final BitSet[] seenBatches;

  private final List<ChunkRef> chunks = new ArrayList<>();
  private int nextToRequest;
  private final Deque<InFlight> inFlight = new ArrayDeque<>();
  private Frame current;
  private BatchDecoder.Cursor cursor;
  private long bytesRead;
  private long chunksRead;
  private long waitNanos;

  private record ChunkRef(CommittedFile file, int chunkIndex) {
    String describe(ShuffleId shuffle) {
      return "chunk " + chunkIndex + "/" + file.chunks() + " of partition " + file.location().partition()
          + " epoch " + file.location().epoch() + " of shuffle " + shuffle + " on worker " + file.location().worker();
    }
  }

  private record InFlight(ChunkRef ref, CompletableFuture<Frame> answer) {}

  public PartitionReader(ShuffleId shuffle, ReducerFileGroups groups, int startPartition, int endPartition,
      int startMap, int endMap, ClientPool pool, ClientOptions.Settings settings) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.groups = requireNonNull(groups, "groups is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.startMap = Math.max(0, startMap);
    this.endMap = Math.min(groups.numMaps(), endMap);
    this.seenBatches = new BitSet[groups.numMaps()];
    for (int p = startPartition; p < endPartition; p++) {
      for (CommittedFile f : groups.files(p)) {
        for (int c = 0; c < f.chunks(); c++) {
          chunks.add(new ChunkRef(f, c));
        }
      }
    }
  }

  /** The next kept batch, or null when every chunk has been read. */
  public Batch next() {
    while (true) {
      if (cursor != null) {
        Batch batch = cursor.next(this::keep);
        if (batch != null) {
          return batch;
        }
        current.release();
        current = null;
        cursor = null;
      }
      requestAhead();
      InFlight head = inFlight.pollFirst();
      if (head == null) {
        return null;
      }
      String where = head.ref().describe(shuffle);
      long waitStart = System.nanoTime();
      current = Futures.await(head.answer(), settings.fetchTimeout(), "fetching " + where);
      waitNanos += System.nanoTime() - waitStart;
      chunksRead++;
      bytesRead += current.body().readableBytes();
      cursor = decoder.cursor(current.body(), where);
      requestAhead();
    }
  }

  private boolean keep(int mapId, int attemptId, int batchId) {
    if (mapId < startMap || mapId >= endMap || groups.winningAttempt(mapId) != attemptId) {
      return false;
    }
    BitSet seen = seenBatches[mapId];
    if (seen == null) {
      seen = seenBatches[mapId] = new BitSet();
    }
    if (seen.get(batchId)) {
      return false;
    }
    seen.set(batchId);
    return true;
  }

  private void requestAhead() {
    while (inFlight.size() < settings.prefetchChunks() && nextToRequest < chunks.size()) {
      ChunkRef ref = chunks.get(nextToRequest++);
      FetchChunkRequest request = FetchChunkRequest.newBuilder()
          .setShuffle(IdMapper.toProto(shuffle))
          .setPartitionId(ref.file().location().partition())
          .setEpoch(ref.file().location().epoch())
          .setChunkIndex(ref.chunkIndex())
          .build();
      HostPort fetch = new HostPort(ref.file().location().endpoint().host(),
          ref.file().location().endpoint().fetchPort());
      inFlight.addLast(new InFlight(ref, pool.send(fetch, request, null, settings.fetchTimeout())));
    }
  }

  /** Chunks fetched so far. */
  public long chunksRead() {
    return chunksRead;
  }

  /** Time spent waiting for chunks to arrive. */
  public long waitNanos() {
    return waitNanos;
  }

  /** Bytes fetched so far (as stored: compressed, with batch headers). */
  public long bytesRead() {
    return bytesRead;
  }

  /** Releases the chunk being read and any prefetched ones. Idempotent. */
  @Override
  public void close() {
    if (current != null) {
      current.release();
      current = null;
      cursor = null;
    }
    for (InFlight f : inFlight) {
      f.answer().whenComplete((frame, error) -> {
        if (frame != null) {
          frame.release();
        }
      });
    }
    inFlight.clear();
    nextToRequest = chunks.size();
  }
}
