package io.faro.worker.fetch;

import static java.util.Objects.requireNonNull;

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
import io.faro.worker.partition.PartitionCommit;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.ReadAhead;
import io.faro.worker.protocol.ProtoMapper;
import io.faro.worker.storage.DiskReader;
import io.faro.worker.storage.Extent;
import io.faro.worker.storage.PartitionFile;
import io.netty.buffer.ByteBuf;
import io.netty.channel.DefaultFileRegion;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Serves the fetch port: a reducer opens a committed partition (gets its chunk offsets) and fetches
 * chunks by index. A chunk is read by its disk's {@link DiskReader}, on the disk's reader threads
 * and in file-offset order with the other reads queued there, and sent from the reader's buffers:
 * on every disk, with direct I/O or not, so that a read that misses the page cache waits on a
 * reader thread and never on the event loop that serves every other fetch of its connections. Only
 * a chunk larger than the reader's buffers (one huge pushed part) is sent from the file with {@link
 * DefaultFileRegion} (sendfile: from the page cache to the socket, from the event loop).
 *
 * <p>A fetch that names maps (a sub-read of a skewed partition) gets only their batches of the
 * chunk ({@link MapRangeCut}), so that the sub-reads of one partition fetch its bytes once between
 * them.
 *
 * <p>Each fetch may also queue, behind the chunk reads, the read-ahead of the files reducers will
 * fetch next ({@link ReadAhead}, {@link DiskReader#warm}); it does nothing on a disk with direct
 * I/O.
 */
public final class FetchHandler implements RequestHandler {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FetchHandler.class);

  /** The requests this port serves. */
  public static final java.util.List<MessageType> SERVED =
      java.util.List.of(MessageType.OPEN_STREAM_REQUEST, MessageType.FETCH_CHUNK_REQUEST);

  /**
   * How much of a shuffle to read ahead of its reducers (faro.worker.read.ahead.files and .bytes).
   */
  public record ReadAheadLimits(int files, long bytes) {
    public static final ReadAheadLimits NONE = new ReadAheadLimits(0, 0);

    public ReadAheadLimits {
      if (files < 0 || bytes < 0) {
        throw new IllegalArgumentException("negative read-ahead: " + files + " files, " + bytes);
      }
    }
  }

  private final PartitionStore store;
  private final ReadAheadLimits readAhead;

  /** A handler that reads nothing ahead. */
  public FetchHandler(PartitionStore store) {
    this(store, ReadAheadLimits.NONE);
  }

  public FetchHandler(PartitionStore store, ReadAheadLimits readAhead) {
    this.store = requireNonNull(store, "store is null");
    this.readAhead = requireNonNull(readAhead, "readAhead is null");
  }

  /** Reading a shuffle needs the secret of the application it belongs to. */
  @Override
  public java.util.Optional<String> refusal(
      MessageType type, com.google.protobuf.Message meta, io.faro.common.auth.Identity who) {
    return switch (type) {
      case OPEN_STREAM_REQUEST ->
          io.faro.worker.auth.AppAccess.refusal(
              store, ((OpenStreamRequest) meta).getShuffle(), who, type);
      case FETCH_CHUNK_REQUEST ->
          io.faro.worker.auth.AppAccess.refusal(
              store, ((FetchChunkRequest) meta).getShuffle(), who, type);
      default -> java.util.Optional.empty();
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
    io.faro.worker.storage.ChunkIndex chunks = committed.chunks();
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
    // A chunk larger than the disk's read buffers (one huge pushed part) is sent with sendfile.
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
    if (pieces.size() > 1) {
      // Runs only, and rare: a huge part in a chunk with others, in several runs.
      store.counters().chunkFetched(length, 0);
      responder.respond(answer, readHere(key, chunk, pieces, length));
      return;
    }
    Path file = pieces.get(0).file();
    offset = pieces.get(0).offset();
    // Open and check the file before answering: once the answer is being sent, a missing or
    // short file can only close the connection, which every reducer of that executor shares.
    FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.READ);
    } catch (IOException e) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED, "cannot open " + file + " of partition " + key + ": " + e);
    }
    try {
      PartitionFile.requireBytesUpTo(
          channel, file, offset + length, "chunk " + chunk + " of partition " + key);
    } catch (IOException | FaroException e) {
      closeQuietly(channel);
      throw e instanceof FaroException fe
          ? fe
          : new FaroException(ErrorCode.STORAGE_FAILED, "cannot read " + file + ": " + e);
    }
    // The region owns the channel and closes it once sent (or dropped). Sent whole even to a
    // reader of some maps: a chunk this large is one pushed part, of one map.
    store.counters().chunkFetched(length, 0);
    responder.respond(answer, new DefaultFileRegion(channel, offset, length));
    readAhead(key);
  }

  /**
   * Queues, behind the chunk reads, the read-ahead of the shuffle's files that reducers will fetch
   * next, now that one fetched {@code fetched} (see {@link io.faro.worker.partition.ReadAhead}).
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

  /**
   * Reads {@code pieces} ({@code length} bytes, more than the disk's read buffers hold) here, into
   * one buffer: a chunk of runs too large for the read buffers, which a single file region cannot
   * send. At most faro.network.max.frame.size, as every chunk.
   */
  private static ByteBuf readHere(PartitionKey key, int chunk, List<Extent> pieces, long length) {
    ByteBuf bytes = io.netty.buffer.Unpooled.directBuffer((int) length);
    try {
      for (Extent piece : pieces) {
        try (FileChannel channel = FileChannel.open(piece.file(), StandardOpenOption.READ)) {
          PartitionFile.requireBytesUpTo(
              channel, piece.file(), piece.end(), "chunk " + chunk + " of partition " + key);
          long position = piece.offset();
          while (position < piece.end()) {
            int n = bytes.writeBytes(channel, position, (int) (piece.end() - position));
            if (n <= 0) {
              throw new FaroException(
                  ErrorCode.STORAGE_FAILED, piece.file() + " ended at " + position);
            }
            position += n;
          }
        }
      }
      return bytes;
    } catch (IOException e) {
      bytes.release();
      throw new FaroException(
          ErrorCode.STORAGE_FAILED,
          "cannot read chunk " + chunk + " of partition " + key + ": " + e);
    } catch (RuntimeException e) {
      bytes.release();
      throw e;
    }
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      // Nothing was read from it.
    }
  }
}
