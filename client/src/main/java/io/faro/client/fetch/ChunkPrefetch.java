package io.faro.client.fetch;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.proto.FetchChunkRequest;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.OpenStreamResponse;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The chunks one reader fetches, in the order it reads them (epoch group by epoch group, chunk by
 * chunk, each from its group's current copy), with up to faro.client.fetch.prefetch.chunks requests
 * on their way ahead of the one being read. A reader of some maps skips the chunks its workers say
 * hold none of them. After a failure the stream restarts at the chunk that failed ({@link
 * #restartAt}); the answers asked for ahead are dropped.
 *
 * <p>Confined to the reader's thread.
 */
final class ChunkPrefetch {
  // The reader's log lines keep the reader's name.
  private static final Logger LOG = LoggerFactory.getLogger(PartitionReader.class);

  /** A chunk asked for, and its answer on the way. */
  record InFlight(ChunkRef ref, CompletableFuture<Frame> answer) {}

  private final ShuffleId shuffle;
  private final List<EpochGroup> epochGroups;
  private final BatchFilter filter;
  private final ClientPool pool;
  private final ClientSettings settings;
  // The next chunk to request: group index and chunk index within it.
  private int nextGroup;
  private int nextChunk;
  private final Deque<InFlight> inFlight = new ArrayDeque<>();
  private long chunksSkipped;

  ChunkPrefetch(
      ShuffleId shuffle,
      List<EpochGroup> epochGroups,
      BatchFilter filter,
      ClientPool pool,
      ClientSettings settings) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.epochGroups = requireNonNull(epochGroups, "epochGroups is null");
    this.filter = requireNonNull(filter, "filter is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
  }

  /** The oldest request on its way, taken from the stream; null when every chunk was read. */
  InFlight poll() {
    return inFlight.pollFirst();
  }

  /** The partition of the oldest request on its way, or -1. */
  int headPartition() {
    InFlight head = inFlight.peekFirst();
    return head != null ? head.ref().group().partition : -1;
  }

  /** Asks for the next chunks until prefetch.chunks are on their way or none is left. */
  void requestAhead() {
    while (inFlight.size() < settings.prefetchChunks() && nextGroup < epochGroups.size()) {
      EpochGroup group = epochGroups.get(nextGroup);
      if (filter.readsSomeMaps() && !group.asked) {
        askWhichChunks(group);
      }
      if (nextChunk >= group.file().chunks()) {
        nextGroup++;
        nextChunk = 0;
        continue;
      }
      if (!group.wants(nextChunk)) {
        nextChunk++;
        continue;
      }
      ChunkRef ref = new ChunkRef(group, group.file(), nextChunk++);
      FetchChunkRequest.Builder request =
          FetchChunkRequest.newBuilder()
              .setShuffle(IdMapper.toProto(shuffle))
              .setPartitionId(ref.file().location().partition())
              .setEpoch(ref.file().location().epoch())
              .setChunkIndex(ref.chunkIndex());
      if (filter.readsSomeMaps()) {
        // The worker leaves the other maps' batches out (an older one sends the whole chunk).
        request.setStartMap(filter.startMap()).setEndMap(filter.endMap());
      }
      HostPort fetch = ref.file().location().endpoint().fetch();
      inFlight.addLast(
          new InFlight(ref, pool.send(fetch, request.build(), null, settings.fetchTimeout())));
    }
  }

  /** The next request asks for {@code chunk} again, from its group's current copy. */
  void restartAt(ChunkRef chunk) {
    nextGroup = epochGroups.indexOf(chunk.group());
    nextChunk = chunk.chunkIndex();
  }

  /**
   * As {@link #restartAt}, unless the group's current copy (after a switch) has no such chunk: then
   * the stream goes on with the next group, and this says true. A replica may hold fewer chunks
   * than its primary: only parts never acknowledged are missing.
   */
  boolean restartAtOrAfter(ChunkRef chunk) {
    restartAt(chunk);
    if (nextChunk >= chunk.group().file().chunks()) {
      nextGroup++;
      nextChunk = 0;
      return true;
    }
    return false;
  }

  /**
   * For a reader of some maps: asks the epoch's copies (the one being read first) which maps each
   * of their chunks holds, and marks the chunks that may hold the maps read. A replica holds the
   * primary's parts in the same order cut by the same chunk size, up to the first it refused, so
   * its chunk k holds a part of the primary's chunk k: either copy's answer is safe for both.
   * Without an answer (a file written before chunks knew their maps, or no copy answered), every
   * chunk is read: skipping is only a saving, and the filter drops the other maps' batches either
   * way.
   */
  private void askWhichChunks(EpochGroup group) {
    group.asked = true;
    if (group.file().chunks() == 0) {
      return;
    }
    for (int i = 0; i < group.copies.size(); i++) {
      CommittedFile file = group.copies.get((group.copy + i) % group.copies.size());
      OpenStreamRequest request =
          OpenStreamRequest.newBuilder()
              .setShuffle(IdMapper.toProto(shuffle))
              .setPartitionId(file.location().partition())
              .setEpoch(file.location().epoch())
              .build();
      OpenStreamResponse chunks;
      try {
        chunks =
            Futures.await(
                pool.call(file.location().endpoint().fetch(), request, OpenStreamResponse.class),
                settings.network().requestTimeout(),
                "asking which maps the chunks of partition "
                    + file.location().partition()
                    + " hold");
      } catch (FaroException e) {
        if (Thread.currentThread().isInterrupted()) {
          throw e;
        }
        LOG.info(
            "{} did not say which maps its chunks of partition {} epoch {} of shuffle {} hold:"
                + " {}",
            file.location().worker(),
            file.location().partition(),
            file.location().epoch(),
            shuffle,
            e.getMessage());
        continue;
      }
      int count = chunks.getChunkFirstMapsCount();
      if (count == 0 || count != chunks.getChunkLastMapsCount()) {
        return; // not known for this file
      }
      boolean[] wanted = new boolean[count];
      for (int c = 0; c < count; c++) {
        wanted[c] = filter.mayKeep(chunks.getChunkFirstMaps(c), chunks.getChunkLastMaps(c));
        if (!wanted[c]) {
          chunksSkipped++;
        }
      }
      group.wanted = wanted;
      return;
    }
  }

  /** Chunks a reader of some maps did not fetch: they hold none of its maps. */
  long chunksSkipped() {
    return chunksSkipped;
  }

  /** Forgets the requests ahead; their answers are released when they come. */
  void dropInFlight() {
    for (InFlight f : inFlight) {
      f.answer()
          .whenComplete(
              (frame, error) -> {
                if (frame != null) {
                  frame.release();
                }
              });
    }
    inFlight.clear();
  }

  /** Drops the requests ahead and asks for nothing more. Idempotent. */
  void close() {
    dropInFlight();
    nextGroup = epochGroups.size();
  }
}
