package io.faro.worker.push;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.auth.Identity;
import io.faro.common.batch.BatchFormat;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.IdMapper;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.Request;
import io.faro.common.network.RequestHandler;
import io.faro.common.network.Responder;
import io.faro.proto.MessageType;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.worker.WorkerOptions;
import io.faro.worker.auth.AppAccess;
import io.faro.worker.partition.PushStatus;
import io.faro.worker.protocol.ProtoMapper;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Serves the push port. Runs on the push event loops: decodes a push frame, checks it whole, hands
 * it to the {@link FrameAppender} (which appends each part to its partition's buffer as a retained
 * slice of the frame, no copy, no decompression, and forwards to replicas), and answers one status
 * per part. No disk IO and no waiting here.
 *
 * <p>A frame whose parts do not add up to its body, or with a part that is not a sequence of
 * well-formed batches, is refused as a whole with DATA_CORRUPTED: nothing of it is appended, and
 * the connection stays up for the next request.
 */
public final class PushHandler implements RequestHandler {
  private final FrameAppender appender;

  public PushHandler(FrameAppender appender) {
    this.appender = requireNonNull(appender, "appender is null");
  }

  /**
   * A push marked as a primary's forward to its replica needs the cluster secret (any other peer
   * could otherwise write into a replica with no primary's checks); any other push, the secret of
   * the application whose shuffle it writes.
   */
  @Override
  public Optional<String> refusal(MessageType type, Message meta, Identity who) {
    if (!(meta instanceof PushRequest push)) {
      return Optional.empty();
    }
    return push.getReplica()
        ? Identity.require(Identity.CLUSTER, who, "a replica's forwarded push")
        : AppAccess.refusal(appender.store(), push.getShuffle(), who, "a push");
  }

  /** Borrows the request's body; each appended part takes a retained slice of it. */
  @Override
  public void handle(Request request, Responder responder) {
    if (request.type() != MessageType.PUSH_REQUEST) {
      responder.fail(
          ErrorCode.UNSUPPORTED_MESSAGE, request.type() + " is not served on the push port");
      return;
    }
    PushRequest push = request.meta(PushRequest.class);
    ByteBuf body = request.body();
    List<PartitionKey> keys;
    try {
      ShuffleId shuffle = IdMapper.shuffleId(push.getShuffle());
      keys = partitionKeys(shuffle, push);
      validate(shuffle, push, body);
    } catch (FaroException e) {
      responder.fail(e.code(), e.getMessage());
      return;
    }
    FrameAppender.Appended appended;
    try {
      appended =
          appender.append(
              push,
              keys,
              body,
              request.channel(),
              AppAccess.nonceOf(Identity.of(request.channel())));
    } catch (FaroException e) {
      responder.fail(e.code(), e.getMessage());
      return;
    }
    // Answered once every replica answered (at once without replicas); never exceptionally.
    appended
        .statuses()
        .thenAccept(
            statuses -> {
              PushResponse.Builder response = PushResponse.newBuilder();
              for (PushStatus s : statuses) {
                response.addStatuses(ProtoMapper.toProto(s, appended.slowDown()));
              }
              responder.respond(response.build());
            });
  }

  private static List<PartitionKey> partitionKeys(ShuffleId shuffle, PushRequest push) {
    List<PartitionKey> keys = new ArrayList<>(push.getPartsCount());
    for (PushPart part : push.getPartsList()) {
      keys.add(ProtoMapper.partitionKey(shuffle, part.getPartitionId(), part.getEpoch()));
    }
    return keys;
  }

  /**
   * @throws FaroException DATA_CORRUPTED naming the shuffle, the part and what is wrong
   */
  private static void validate(ShuffleId shuffle, PushRequest push, ByteBuf body) {
    long declared = 0;
    for (PushPart part : push.getPartsList()) {
      // An empty part carries nothing but would pin its frame's memory until its partition flushes.
      if (part.getLength() <= 0) {
        throw corrupt(
            shuffle,
            "part for partition " + part.getPartitionId() + " declares length " + part.getLength());
      }
      declared += part.getLength();
    }
    if (declared != body.readableBytes()) {
      throw corrupt(
          shuffle,
          push.getPartsCount()
              + " parts declare "
              + declared
              + " bytes but the frame body has "
              + body.readableBytes());
    }
    if (push.getReplica()
        && push.getChunkSize() != 0
        && (push.getChunkSize() < WorkerOptions.CHUNK_SIZE_MIN
            || push.getChunkSize() > WorkerOptions.CHUNK_SIZE_MAX)) {
      throw corrupt(
          shuffle,
          "a forwarded frame gives chunk size "
              + push.getChunkSize()
              + ", outside the bounds of "
              + WorkerOptions.CHUNK_SIZE.key()
              + " ["
              + WorkerOptions.CHUNK_SIZE_MIN
              + ", "
              + WorkerOptions.CHUNK_SIZE_MAX
              + "]");
    }
    int offset = body.readerIndex();
    for (int i = 0; i < push.getPartsCount(); i++) {
      PushPart part = push.getParts(i);
      try {
        BatchFormat.checkStructure(body, offset, part.getLength());
      } catch (FaroException e) {
        throw corrupt(
            shuffle,
            "part "
                + i
                + " (partition "
                + part.getPartitionId()
                + " epoch "
                + part.getEpoch()
                + ", "
                + part.getLength()
                + " bytes at body offset "
                + (offset - body.readerIndex())
                + "): "
                + e.getMessage());
      }
      offset += part.getLength();
    }
  }

  private static FaroException corrupt(ShuffleId shuffle, String why) {
    return new FaroException(
        ErrorCode.DATA_CORRUPTED,
        "push to shuffle " + shuffle + " refused, nothing appended: " + why);
  }
}
