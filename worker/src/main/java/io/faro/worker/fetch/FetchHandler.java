package io.faro.worker.fetch;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionKey;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.proto.FetchChunkRequest;
import io.faro.proto.FetchChunkResponse;
import io.faro.proto.MessageType;
import io.faro.proto.OpenStreamRequest;
import io.faro.proto.OpenStreamResponse;
import io.faro.worker.auth.AppAccess;
import io.faro.worker.partition.PartitionCommit;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.protocol.ProtoMapper;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.DiskReader;
import io.faro.worker.storage.Extent;
import io.faro.worker.storage.ReadAhead;
import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the fetch port: a reducer opens a committed partition (gets its chunk offsets) and fetches
 * chunks by index. A chunk is read by its disk's {@link DiskReader}, on the disk's reader threads
 * and in file-offset order with the other reads queued there, and sent from the reader's buffers:
 * on every disk, with direct I/O or not, so that a read that misses the page cache waits on a
 * reader thread and never on the event loop that serves every other fetch of its connections. A
 * chunk larger than the reader's buffers (one huge pushed part) too: it is read on the reader
 * threads into a buffer of its own ({@link DiskReader#readLarge}). Nothing here touches a file.
 *
 * <p>A fetch that names maps (a sub-read of a skewed partition) gets only their batches of the
 * chunk ({@link MapRangeCut}), so that the sub-reads of one partition fetch its bytes once between
 * them.
 *
 * <p>With faro.worker.fetch.zero.copy (off by default), a whole chunk of a file of its own, on a
 * disk read through the page cache and a connection without TLS, is sent from the file (sendfile)
 * when a reader thread finds every page of it resident: no read buffer, no copy through this
 * process ({@link DiskReader#readOrRegion}); one that is not resident is read into buffers as any
 * other.
 *
 * <p>Each fetch may also queue, behind the chunk reads, the read-ahead of the files reducers will
 * fetch next ({@link ReadAhead}, {@link DiskReader#warm}); it does nothing on a disk with direct
 * I/O.
 */
public final class FetchHandler implements RequestHandler {
  private static final Logger LOG = LoggerFactory.getLogger(FetchHandler.class);

  /** The requests this port serves. */
  public static final List<MessageType> SERVED =
      List.of(MessageType.OPEN_STREAM_REQUEST, MessageType.FETCH_CHUNK_REQUEST);

  private final PartitionStore store;
  private final ReadAhead.Limits readAhead;
  private final boolean zeroCopy;

  /** A handler that reads nothing ahead and reads every chunk into buffers. */
  public FetchHandler(PartitionStore store) {
    this(store, ReadAhead.Limits.NONE, false);
  }

  /**
   * @param zeroCopy whether a chunk found in the page cache is sent from its file
   *     (faro.worker.fetch.zero.copy)
   */
  public FetchHandler(PartitionStore store, ReadAhead.Limits readAhead, boolean zeroCopy) {
    this.store = requireNonNull(store, "store is null");
    this.readAhead = requireNonNull(readAhead, "readAhead is null");
    this.zeroCopy = zeroCopy;
  }

  /** Reading a shuffle needs the secret of the application it belongs to. */
  @Override
  public Optional<String> refusal(MessageType type, Message meta, Identity who) {
    return switch (type) {
      case OPEN_STREAM_REQUEST ->
          AppAccess.refusal(store, ((OpenStreamRequest) meta).getShuffle(), who, type);
      case FETCH_CHUNK_REQUEST ->
          AppAccess.refusal(store, ((FetchChunkRequest) meta).getShuffle(), who, type);
      default -> Optional.empty();
    };
  }

  @Override
  public void handle(Request request, Responder responder) {
    try {
      switch (request.type()) {
        case OPEN_STREAM_REQUEST -> openStream(request.meta(OpenStreamRequest.class), responder);
        case FETCH_CHUNK_REQUEST -> fetchChunk(request.meta(FetchChunkRequest.class), responder);
        default ->
            responder.fail(
                ErrorCode.UNSUPPORTED_MESSAGE, request.type() + " is not served on the fetch port");
      }
    } catch (FaroException e) {
      responder.fail(e.code(), e.getMessage());
    }
  }

  private void openStream(OpenStreamRequest open, Responder responder) {
    PartitionKey key =
        ProtoMapper.partitionKey(
            IdMapper.shuffleId(open.getShuffle()), open.getPartitionId(), open.getEpoch());
    PartitionCommit.Committed committed = store.committed(key);
    ChunkIndex chunks = committed.chunks();
    OpenStreamResponse.Builder response =
        OpenStreamResponse.newBuilder().addAllChunkOffsets(chunks.asList());
    if (chunks.hasMapRanges()) {
      for (int i = 0; i < chunks.chunkCount(); i++) {
        response.addChunkFirstMaps(chunks.firstMap(i)).addChunkLastMaps(chunks.lastMap(i));
      }
    }
    responder.respond(response.build());
  }

  private void fetchChunk(FetchChunkRequest fetch, Responder responder) {
    PartitionKey key =
        ProtoMapper.partitionKey(
            IdMapper.shuffleId(fetch.getShuffle()), fetch.getPartitionId(), fetch.getEpoch());
    PartitionCommit.Committed committed = store.committed(key);
    int chunk = fetch.getChunkIndex();
    if (fetch.getStartMap() < 0) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "maps ["
              + fetch.getStartMap()
              + ", "
              + fetch.getEndMap()
              + ") asked of partition "
              + key);
    }
    int chunkCount = committed.chunks().chunkCount();
    if (chunk < 0 || chunk >= chunkCount) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "partition " + key + " has " + chunkCount + " chunks, no chunk " + chunk);
    }
    long offset = committed.chunks().offset(chunk);
    long length = committed.chunks().chunkLength(chunk);
    // Where the chunk's bytes lie: a range of the partition's own file, or pieces of runs.
    List<Extent> pieces = committed.data().slice(offset, length);
    FetchChunkResponse answer = FetchChunkResponse.newBuilder().setChunkIndex(chunk).build();
    DiskReader reader = store.disk(key).reader();
    if (zeroCopy
        && fetch.getEndMap() <= fetch.getStartMap()
        && length <= reader.maxReadBytes()
        && responder.takesFileRegions()) {
      reader
          .readOrRegion(pieces, responder::connected)
          .whenComplete(
              (body, error) -> {
                if (error != null) {
                  responder.fail(error);
                  return;
                }
                store.counters().chunkFetched(length, 0);
                if (body instanceof FileRegion region) {
                  responder.respondFromFile(answer, region);
                } else {
                  responder.respond(answer, (ByteBuf) body);
                }
              });
      readAhead(key);
      return;
    }
    if (length <= reader.maxReadBytes()) {
      reader
          .read(pieces, responder::connected)
          .whenComplete(
              (bytes, error) -> {
                if (error != null) {
                  responder.fail(error);
                } else {
                  ByteBuf sent;
                  try {
                    sent =
                        fetch.getEndMap() > fetch.getStartMap()
                            ? MapRangeCut.keep(bytes, fetch.getStartMap(), fetch.getEndMap())
                            : bytes;
                  } catch (RuntimeException e) {
                    // The read buffers come from a fixed pool: never keep one.
                    bytes.release();
                    responder.fail(e);
                    return;
                  }
                  // Counted once read: a failed read, or one nobody waits for, served nothing.
                  store
                      .counters()
                      .chunkFetched(sent.readableBytes(), length - sent.readableBytes());
                  responder.respond(answer, sent);
                }
              });
      readAhead(key);
      return;
    }
    // Larger than the disk's read buffers (one huge pushed part): read on the disk's reader
    // threads too, into a buffer of its own, never on this event loop. Sent whole even to a reader
    // of some maps: a chunk this large is one pushed part, of one map.
    reader
        .readLarge(pieces, responder::connected)
        .whenComplete(
            (bytes, error) -> {
              if (error != null) {
                responder.fail(error);
              } else {
                store.counters().chunkFetched(bytes.readableBytes(), 0);
                responder.respond(answer, bytes);
              }
            });
    readAhead(key);
  }

  /**
   * Queues, behind the chunk reads, the read-ahead of the shuffle's files that reducers will fetch
   * next, now that one fetched {@code fetched} (see {@link ReadAhead}).
   */
  private void readAhead(PartitionKey fetched) {
    if (readAhead.files() == 0 || readAhead.bytes() == 0) {
      return;
    }
    try {
      for (ReadAhead.Target target :
          store.readAhead(fetched, readAhead.files(), readAhead.bytes())) {
        target.reader().warm(target.file(), target.bytes());
      }
    } catch (RuntimeException e) {
      // Only a saving: never a second answer to a fetch already answered.
      LOG.debug("No read-ahead after a fetch of {}: {}", fetched, e.toString());
    }
  }
}
