package io.faro.client.fetch;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientOptions;
import io.faro.client.fetch.ReducerFileGroups.CommittedFile;
import io.faro.common.batch.Batch;
import io.faro.common.batch.BatchDecoder;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.RemoteException;
import io.faro.proto.FetchChunkRequest;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.OpenStreamResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads partitions {@code [startPartition, endPartition)} of a committed shuffle generation,
 * keeping only maps {@code [startMap, endMap)}: fetches every epoch of each partition chunk by
 * chunk in order, with up to {@code faro.client.fetch.prefetch.chunks} requests ahead, verifies
 * every batch's checksum, and returns exactly the batches of each map's winning attempt, each
 * batchId once.
 *
 * <p>Failures: a chunk that cannot be fetched (connection lost, timeout, worker error) or fails its
 * checksum is asked again, {@code faro.client.fetch.retries} times per copy with a growing wait,
 * then from the epoch's other copy (the replica, which cuts the same chunks) at the same chunk; a
 * copy whose worker refuses the connection (it is gone) is left at once when another copy remains.
 * When no copy serves it, or a partition was lost at commit, the reader throws DATA_LOST: the
 * engine re-runs the map stage. Batches read before a failure are not returned twice.
 *
 * <p>Confined to the reducer's thread. Each returned batch is valid until the next call.
 *
 * <p>About 540 lines: the fetch state machine (prefetch window, retries, failover between copies,
 * busy workers, the chunks a reader of some maps skips); which batches count is decided by
 * BatchFilter.
 */
public final class PartitionReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionReader.class);

  /** Busy answers tolerated per configured retry before a busy copy counts as failing. */
  private static final int BUSY_RETRIES_PER_RETRY = 10;

  private final ShuffleId shuffle;
  private final ReducerFileGroups groups;
  private final ClientPool pool;
  private final ClientOptions.Settings settings;
  private final BatchDecoder decoder = new BatchDecoder();
  private final BatchFilter filter;
  private final int startPartition;
  private final int endPartition;

  /** The partition a DATA_LOST failure found missing data in, when no chunk is being read. */
  private int failedPartition = -1;

  /** One epoch of one partition: its committed copies (primary first) and the one being read. */
  private static final class EpochGroup {
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

    CommittedFile file() {
      return copies.get(copy);
    }
  }

  private record ChunkRef(EpochGroup group, CommittedFile file, int chunkIndex) {
    String describe(ShuffleId shuffle) {
      return "chunk "
          + chunkIndex
          + "/"
          + file.chunks()
          + " of partition "
          + file.location().partition()
          + " epoch "
          + file.location().epoch()
          + " ("
          + file.location().role().name().toLowerCase(Locale.ROOT)
          + ") of shuffle "
          + shuffle
          + " on worker "
          + file.location().worker();
    }
  }

  private record InFlight(ChunkRef ref, CompletableFuture<Frame> answer) {}

  private final List<EpochGroup> epochGroups = new ArrayList<>();
  // The next chunk to request: group index and chunk index within it.
  private int nextGroup;
  private int nextChunk;
  private final Deque<InFlight> inFlight = new ArrayDeque<>();
  private Frame current;
  private ChunkRef currentRef;
  private BatchDecoder.Cursor cursor;
  // Failures of the chunk at the head of the stream: on the copy being read, and copies given up.
  private int failuresOnCopy;
  private int copiesGivenUp;
  // Busy answers in a row for busyChunk (a worker whose read buffers are all in use).
  private ChunkRef busyChunk;
  private int busyAnswers;
  // The chunk whose only remaining copy refused connections, and since when.
  private ChunkRef refusedChunk;
  private long refusedSinceNanos;
  private long bytesRead;
  private long chunksRead;
  private long chunksSkipped;
  private long waitNanos;
  private long fetchRetries;

  /**
   * @throws FaroException DATA_LOST if one of the partitions was lost on every copy at commit
   */
  public PartitionReader(
      ReducerFileGroups groups,
      int startPartition,
      int endPartition,
      int startMap,
      int endMap,
      ClientPool pool,
      ClientOptions.Settings settings) {
    this(groups, startPartition, endPartition, startMap, endMap, null, pool, settings);
  }

  /**
   * @param rangeExpected for a reader of some maps only: the batches their winning attempts pushed
   *     to each partition read (from the driver), which it checks as a reader of every map checks
   *     the groups' counts; null for a reader of every map
   * @throws FaroException DATA_LOST if one of the partitions was lost on every copy at commit
   */
  public PartitionReader(
      ReducerFileGroups groups,
      int startPartition,
      int endPartition,
      int startMap,
      int endMap,
      long[] rangeExpected,
      ClientPool pool,
      ClientOptions.Settings settings) {
    this.groups = requireNonNull(groups, "groups is null");
    this.shuffle = groups.faroShuffle();
    this.pool = requireNonNull(pool, "pool is null");
    this.settings = requireNonNull(settings, "settings is null");
    this.filter =
        new BatchFilter(groups, startPartition, endPartition, startMap, endMap, rangeExpected);
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    for (int p = startPartition; p < endPartition; p++) {
      if (groups.lost(p)) {
        throw lost(
            p,
            "its data was on no committed copy when the shuffle was committed (a worker was lost)",
            null);
      }
      TreeMap<Integer, List<CommittedFile>> byEpoch = new TreeMap<>();
      for (CommittedFile f : groups.files(p)) {
        byEpoch.computeIfAbsent(f.location().epoch(), e -> new ArrayList<>()).add(f);
      }
      for (List<CommittedFile> copies : byEpoch.values()) {
        epochGroups.add(new EpochGroup(p, List.copyOf(copies)));
      }
    }
  }

  private FaroException lost(int partition, String why, Throwable cause) {
    return new FaroException(
        ErrorCode.DATA_LOST,
        "partition " + partition + " of shuffle " + shuffle + " cannot be read: " + why,
        cause);
  }

  /**
   * The partition a {@link ErrorCode#DATA_LOST} failure was about, for the engine's fetch failure.
   */
  public int currentPartition() {
    if (failedPartition >= 0) {
      return failedPartition;
    }
    if (currentRef != null) {
      return currentRef.group().partition;
    }
    InFlight head = inFlight.peekFirst();
    return head != null ? head.ref().group().partition : -1;
  }

  /** The next kept batch, or null when every chunk has been read. */
  public Batch next() {
    while (true) {
      if (cursor != null) {
        Batch batch;
        try {
          batch = cursor.next(filter::keep);
        } catch (FaroException e) {
          if (e.code() != ErrorCode.DATA_CORRUPTED) {
            throw e;
          }
          ChunkRef failed = currentRef;
          releaseCurrent();
          recover(failed, e);
          continue;
        }
        if (batch != null) {
          // Seen only once decoded: a batch that fails to decode is read again from the re-fetch.
          filter.returned(batch, currentRef.group().partition);
          return batch;
        }
        releaseCurrent();
        failuresOnCopy = 0;
        copiesGivenUp = 0;
      }
      requestAhead();
      InFlight head = inFlight.pollFirst();
      if (head == null) {
        checkEveryBatchRead();
        return null;
      }
      String where = head.ref().describe(shuffle);
      long waitStart = System.nanoTime();
      try {
        current = Futures.await(head.answer(), settings.fetchTimeout(), "fetching " + where);
      } catch (FaroException e) {
        waitNanos += System.nanoTime() - waitStart;
        recover(head.ref(), e);
        continue;
      }
      waitNanos += System.nanoTime() - waitStart;
      currentRef = head.ref();
      chunksRead++;
      bytesRead += current.body().readableBytes();
      cursor = decoder.cursor(current.body(), where);
      requestAhead();
    }
  }

  private void releaseCurrent() {
    if (current != null) {
      current.release();
    }
    current = null;
    cursor = null;
    currentRef = null;
  }

  /**
   * Restarts the stream at {@code failed}: after a wait on the same copy, or at once on the epoch's
   * other copy, or throws DATA_LOST when every copy failed its retries.
   */
  private void recover(ChunkRef failed, FaroException error) {
    dropInFlight();
    fetchRetries++;
    EpochGroup group = failed.group();
    if (busy(error)
        && busyAnswers(failed) <= Math.max(1, settings.fetchRetries()) * BUSY_RETRIES_PER_RETRY) {
      // The worker answered that its read buffers are all in use: it is busy, not failing, and
      // its copy is as good as before. Wait and ask the same copy again, without counting it
      // against the copy (after enough of them, a busy worker counts as failing like any other).
      LOG.info("{} is busy ({}); asking again", failed.describe(shuffle), error.getMessage());
      sleep(settings.fetchRetryWait().toMillis() << Math.min(busyAnswers - 1, 4));
      nextGroup = epochGroups.indexOf(group);
      nextChunk = failed.chunkIndex();
      return;
    }
    int perCopy = settings.fetchRetries() + 1;
    boolean lastCopy = copiesGivenUp + 1 >= group.copies.size();
    if (Futures.connectionRefused(error) && lastCopy && waitForRestart(failed, error)) {
      nextGroup = epochGroups.indexOf(group);
      nextChunk = failed.chunkIndex();
      return;
    }
    // Nothing listens where the copy is (its worker died): asking it again only wastes the
    // backoff, when the epoch has another copy to go to.
    boolean unreachable = Futures.connectionRefused(error) && !lastCopy;
    boolean switchCopy = unreachable || ++failuresOnCopy >= perCopy;
    if (switchCopy) {
      if (++copiesGivenUp >= group.copies.size()) {
        throw lost(
            group.partition,
            "every copy failed "
                + perCopy
                + " times; last: "
                + failed.describe(shuffle)
                + ": "
                + error.getMessage(),
            error);
      }
      failuresOnCopy = 0;
      group.copy = (group.copy + 1) % group.copies.size();
    }
    LOG.warn(
        "Fetching {} failed ({}); {}",
        failed.describe(shuffle),
        error.getMessage(),
        switchCopy
            ? "switching to the other copy"
                + (unreachable ? " at once: its worker cannot be reached" : "")
            : "asking again (retry " + failuresOnCopy + ")");
    if (!switchCopy) {
      sleep(settings.fetchRetryWait().toMillis() << Math.min(failuresOnCopy - 1, 4));
    }
    nextGroup = epochGroups.indexOf(group);
    nextChunk = failed.chunkIndex();
    // A replica may hold fewer chunks than its primary: only parts never acknowledged are missing.
    if (nextChunk >= group.file().chunks()) {
      nextGroup++;
      nextChunk = 0;
      failuresOnCopy = 0;
      copiesGivenUp = 0;
    }
  }

  /**
   * The only copy left refuses connections: its worker is down, and may be restarting (a restarted
   * worker serves what it committed again). Waits {@link #RESTART_POLL_MILLIS} (at most) and
   * returns true to ask it again, until faro.client.worker.restart.wait has passed since the first
   * refusal for this chunk; then false, and the failure counts as any other.
   */
  private boolean waitForRestart(ChunkRef chunk, FaroException error) {
    long now = System.nanoTime();
    boolean same =
        refusedChunk != null
            && refusedChunk.group() == chunk.group()
            && refusedChunk.chunkIndex() == chunk.chunkIndex()
            && refusedChunk.file() == chunk.file();
    if (!same) {
      refusedChunk = chunk;
      refusedSinceNanos = now;
    }
    long waited = now - refusedSinceNanos;
    if (waited >= settings.workerRestartWait().toNanos()) {
      return false;
    }
    if (!same) {
      LOG.warn(
          "{}: its worker refuses connections ({}); waiting up to {} s for it to come back ({})",
          chunk.describe(shuffle),
          error.getMessage(),
          settings.workerRestartWait().toSeconds(),
          ClientOptions.WORKER_RESTART_WAIT.key());
    }
    // A refused connection costs the worker nothing: ask often, so that a worker back from its
    // restart (about 2 s) is read from within a quarter of a second.
    sleep(Math.min(RESTART_POLL_MILLIS, Math.max(1, settings.fetchRetryWait().toMillis())));
    return true;
  }

  /** How often a reader asks a worker that refuses connections whether it is back. */
  static final long RESTART_POLL_MILLIS = 250;

  /** Busy answers for {@code chunk} in a row, counting this one. */
  private int busyAnswers(ChunkRef chunk) {
    boolean same =
        busyChunk != null
            && busyChunk.group() == chunk.group()
            && busyChunk.chunkIndex() == chunk.chunkIndex()
            && busyChunk.file() == chunk.file();
    busyChunk = chunk;
    busyAnswers = same ? busyAnswers + 1 : 1;
    return busyAnswers;
  }

  /**
   * Whether the worker itself answered TIMEOUT: its read buffers were all in use (busy, not lost).
   */
  private static boolean busy(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof RemoteException remote) {
        return remote.code() == ErrorCode.TIMEOUT;
      }
    }
    return false;
  }

  /**
   * The backoff before asking the same copy again: a worker that dropped a connection may be busy.
   */
  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaroException(ErrorCode.INTERNAL, "interrupted while waiting to fetch again", e);
    }
  }

  /**
   * After the last chunk: each partition must have given exactly the batches its winning attempts
   * (of the maps read) reported at mapper end. Fewer means a batch was lost on its way (a push
   * dropped after being acknowledged, a commit that came too early): DATA_LOST, so that the engine
   * runs the map stage again, instead of a wrong answer. More cannot happen unless the counts are
   * wrong, which is as bad.
   */
  private void checkEveryBatchRead() {
    int p = filter.firstMiscounted();
    if (p >= 0) {
      failedPartition = p;
      throw lost(
          p,
          "its winning map attempts pushed "
              + filter.expected(p)
              + " batches"
              + (filter.readsSomeMaps()
                  ? " (maps " + filter.startMap() + ".." + (filter.endMap() - 1) + ")"
                  : "")
              + " but "
              + filter.kept(p)
              + " were read from the committed files: data went missing after it was acknowledged",
          null);
    }
  }

  private void requestAhead() {
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
      if (group.wanted != null && nextChunk < group.wanted.length && !group.wanted[nextChunk]) {
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
  public long chunksSkipped() {
    return chunksSkipped;
  }

  /** Forgets the requests ahead; their answers are released when they come. */
  private void dropInFlight() {
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

  /** Chunks fetched so far. */
  public long chunksRead() {
    return chunksRead;
  }

  /** Fetches that failed and were tried again (on the same copy or the other). */
  public long fetchRetries() {
    return fetchRetries;
  }

  /** Time spent waiting for chunks to arrive. */
  public long waitNanos() {
    return waitNanos;
  }

  /** Bytes fetched so far (as stored: compressed, with batch headers). */
  public long bytesRead() {
    return bytesRead;
  }

  /** Faro's id of the generation being read. */
  public ShuffleId shuffle() {
    return shuffle;
  }

  /** Releases the chunk being read and any prefetched ones. Idempotent. */
  @Override
  public void close() {
    releaseCurrent();
    dropInFlight();
    nextGroup = epochGroups.size();
    decoder.close();
  }
}
