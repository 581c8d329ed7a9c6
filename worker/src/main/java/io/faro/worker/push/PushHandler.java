package io.faro.worker.push;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.IdMapper;
import io.faro.common.batch.BatchFormat;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
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
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.AppendStatus;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.protocol.ProtoMapper;
import io.netty.buffer.ByteBuf;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.proto.PushStatusP;
import io.faro.worker.partition.PartitionWriter;
import io.faro.worker.replicate.ReplicaLink;
import io.netty.buffer.CompositeByteBuf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Serves the push port. Runs on the push event loops: validates a whole frame, appends each
 * part to its partition's buffer as a retained slice of the frame (no copy, no decompression),
 * and answers one status per part. No disk IO and no waiting here.
 *
 * <p>Replication: a part for a primary with a replica is appended here and forwarded to the
 * replica's worker, and answered once the replica confirmed it (REPLICA_FAILED otherwise). A
 * frame forwarded by a primary (marked replica) is only appended, its chunks cut by the
 * primary's chunk size, which the frame carries.
 *
 * <p>A frame whose parts do not add up to its body, or with a part that is not a sequence of
 * well-formed batches, is refused as a whole with DATA_CORRUPTED: nothing of it is appended,
 * and the connection stays up for the next request.
 */
public final class PushHandler implements RequestHandler {
  private final PartitionStore store;
  private final MemoryBudget budget;

  public PushHandler(PartitionStore store, MemoryBudget budget) {
    this.store = requireNonNull(store, "store is null");
    this.budget = requireNonNull(budget, "budget is null");
  }

  /** Borrows the request's body; each appended part takes a retained slice of it. */
  @Override
  public void handle(Request request, Responder responder) {
    if (request.type() != MessageType.PUSH_REQUEST) {
      responder.fail(ErrorCode.UNSUPPORTED_MESSAGE, request.type() + " is not served on the push port");
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
    int n = keys.size();
    PartitionWriter[] writers = new PartitionWriter[n];
    ReplicaLink[] links = new ReplicaLink[n];
    int[] offsets = new int[n];
    // Parts whose primary has a replica are appended and forwarded together, per link, under the
    // link's lock: the replica then receives each partition's parts in this worker's append order.
    Map<ReplicaLink, List<Integer>> forwarded = new LinkedHashMap<>();
    int forwardCount = 0;
    int offset = body.readerIndex();
    for (int i = 0; i < n; i++) {
      writers[i] = store.writer(keys.get(i)).orElse(null);
      links[i] = writers[i] == null || push.getReplica() ? null : writers[i].replica().orElse(null);
      offsets[i] = offset;
      offset += push.getParts(i).getLength();
      if (links[i] != null) {
        forwarded.computeIfAbsent(links[i], l -> new ArrayList<>()).add(i);
        forwardCount++;
      }
    }
    if (push.getReplica() && request.channel() != null && allPresent(writers)) {
      // A valid frame for replica locations this worker holds: a primary forwards on this
      // connection, and waits for the answer (see MemoryBudget#exemptForwards).
      budget.exemptForwards(request.channel());
    }
    // The parts pin the whole frame until the last is written, and so do the slices forwarded to
    // replicas until their peer answers: charge the frame once, released by all of them.
    FrameCharge charge = new FrameCharge(budget, body.readableBytes(), n + forwardCount);
    AppendStatus[] statuses = new AppendStatus[n];
    List<CompletableFuture<Void>> confirmations = new ArrayList<>(forwarded.size());
    // A forwarded frame's partitions are cut by their primary's chunk size, not this worker's.
    long chunkSize = push.getReplica() && push.getChunkSize() > 0 ? push.getChunkSize() : store.chunkSize();
    for (int i = 0; i < n; i++) {
      if (links[i] == null) {
        statuses[i] = store.append(keys.get(i), writers[i],
            body.retainedSlice(offsets[i], push.getParts(i).getLength()), charge, chunkSize);
        if (push.getReplica() && writers[i] != null && statuses[i] == AppendStatus.SPLIT) {
          writers[i].forwardedPartRefused("answered " + statuses[i]);
        }
      }
    }
    forwarded.forEach((link, parts) -> confirmations.add(
        appendAndForward(link, push, body, keys, writers, offsets, parts, statuses, charge)));
    // Read once after appending: this frame's own bytes may be what crossed the mark.
    boolean slowDown = budget.isPaused();
    Runnable answer = () -> {
      PushResponse.Builder response = PushResponse.newBuilder();
      for (AppendStatus s : statuses) {
        response.addStatuses(s == null ? PushStatusP.REPLICA_FAILED : ProtoMapper.toProto(s, slowDown));
      }
      responder.respond(response.build());
    };
    if (confirmations.isEmpty()) {
      answer.run();
    } else {
      CompletableFuture.allOf(confirmations.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> answer.run());
    }
  }

  /**
   * Appends {@code parts} (indexes into the frame) and forwards the appended ones to the replica
   * on {@code link}, both under the link's lock. Completes once the replica answered; a part the
   * replica did not confirm gets a null status (answered REPLICA_FAILED) and its writer takes no
   * more data.
   */
  private CompletableFuture<Void> appendAndForward(ReplicaLink link, PushRequest push, ByteBuf body,
      List<PartitionKey> keys, PartitionWriter[] writers, int[] offsets, List<Integer> parts,
      AppendStatus[] statuses, FrameCharge charge) {
    List<Integer> sent = new ArrayList<>(parts.size());
    List<AppendStatus> own = new ArrayList<>(parts.size());
    CompletableFuture<Frame> answer;
    synchronized (link.lock()) {
      PushRequest.Builder meta = PushRequest.newBuilder().setShuffle(push.getShuffle()).setReplica(true)
          .setChunkSize(store.chunkSize());
      CompositeByteBuf copy = body.alloc().compositeDirectBuffer(parts.size());
      for (int i : parts) {
        int length = push.getParts(i).getLength();
        AppendStatus status = store.append(keys.get(i), writers[i], body.retainedSlice(offsets[i], length), charge,
            store.chunkSize());
        if (status == AppendStatus.ACCEPTED || status == AppendStatus.SOFT_SPLIT) {
          sent.add(i);
          own.add(status);
          meta.addParts(push.getParts(i));
          copy.addComponent(true, body.retainedSlice(offsets[i], length));
          statuses[i] = null; // answered once the replica confirms
        } else {
          statuses[i] = status;
          charge.partReleased(); // no forwarded slice for this part
        }
      }
      if (sent.isEmpty()) {
        copy.release();
        return CompletableFuture.completedFuture(null);
      }
      store.counters().forwarded(copy.readableBytes());
      answer = link.forward(meta.build(), copy);
    }
    return answer.handle((frame, error) -> {
      try {
        List<PushStatusP> replicaStatuses = frame == null ? List.of()
            : frame.meta(PushResponse.class).getStatusesList();
        for (int k = 0; k < sent.size(); k++) {
          int i = sent.get(k);
          PushStatusP r = k < replicaStatuses.size() ? replicaStatuses.get(k) : PushStatusP.PUSH_STATUS_UNSPECIFIED;
          // A part the replica took after it refused an earlier one of the partition (a frame
          // forwarded before that refusal was answered) is not confirmed either: the replica is
          // no longer a prefix of the primary from that refusal on.
          boolean confirmed = (r == PushStatusP.OK || r == PushStatusP.SLOW_DOWN || r == PushStatusP.SOFT_SPLIT)
              && !writers[i].stoppedTakingData();
          if (confirmed) {
            // The replica's split (its disk filling, its own threshold) moves the client too.
            statuses[i] = r == PushStatusP.SOFT_SPLIT && own.get(k) == AppendStatus.ACCEPTED
                ? AppendStatus.SOFT_SPLIT : own.get(k);
          } else {
            writers[i].replicaLost(error != null ? String.valueOf(Futures.unwrap(error).getMessage())
                : "replica answered " + r);
          }
        }
      } finally {
        if (frame != null) {
          frame.release();
        }
        // The forwarded slices were written (or dropped) by now: their share of the charge goes.
        sent.forEach(i -> charge.partReleased());
      }
      return null;
    });
  }

  private static boolean allPresent(PartitionWriter[] writers) {
    for (PartitionWriter w : writers) {
      if (w == null) {
        return false;
      }
    }
    return writers.length > 0;
  }

  private static List<PartitionKey> partitionKeys(ShuffleId shuffle, PushRequest push) {
    List<PartitionKey> keys = new ArrayList<>(push.getPartsCount());
    for (PushPart part : push.getPartsList()) {
      keys.add(ProtoMapper.partitionKey(shuffle, part.getPartitionId(), part.getEpoch()));
    }
    return keys;
  }

  /** @throws FaroException DATA_CORRUPTED naming the shuffle, the part and what is wrong */
  private static void validate(ShuffleId shuffle, PushRequest push, ByteBuf body) {
    long declared = 0;
    for (PushPart part : push.getPartsList()) {
      // An empty part carries nothing but would pin its frame's memory until its partition flushes.
      if (part.getLength() <= 0) {
        throw corrupt(shuffle, "part for partition " + part.getPartitionId() + " declares length " + part.getLength());
      }
      declared += part.getLength();
    }
    if (declared != body.readableBytes()) {
      throw corrupt(shuffle, push.getPartsCount() + " parts declare " + declared
          + " bytes but the frame body has " + body.readableBytes());
    }
    if (push.getReplica() && push.getChunkSize() != 0
        && (push.getChunkSize() < WorkerOptions.CHUNK_SIZE_MIN || push.getChunkSize() > WorkerOptions.CHUNK_SIZE_MAX)) {
      throw corrupt(shuffle, "a forwarded frame gives chunk size " + push.getChunkSize() + ", outside the bounds of "
          + WorkerOptions.CHUNK_SIZE.key() + " [" + WorkerOptions.CHUNK_SIZE_MIN + ", " + WorkerOptions.CHUNK_SIZE_MAX + "]");
    }
    int offset = body.readerIndex();
    for (int i = 0; i < push.getPartsCount(); i++) {
      PushPart part = push.getParts(i);
      try {
        BatchFormat.checkStructure(body, offset, part.getLength());
      } catch (FaroException e) {
        throw corrupt(shuffle, "part " + i + " (partition " + part.getPartitionId() + " epoch "
            + part.getEpoch() + ", " + part.getLength() + " bytes at body offset "
            + (offset - body.readerIndex()) + "): " + e.getMessage());
      }
      offset += part.getLength();
    }
  }

  private static FaroException corrupt(ShuffleId shuffle, String why) {
    return new FaroException(ErrorCode.DATA_CORRUPTED, "push to shuffle " + shuffle + " refused, nothing appended: " + why);
  }
}
