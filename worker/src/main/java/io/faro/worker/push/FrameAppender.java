package io.faro.worker.push;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.PushResponse;
import io.faro.proto.PushStatusP;
import io.faro.worker.memory.FrameCharge;
import io.faro.worker.memory.MemoryBudget;
import io.faro.worker.partition.PartitionStore;
import io.faro.worker.partition.PartitionWriter;
import io.faro.worker.partition.PushStatus;
import io.faro.worker.replicate.ReplicaLink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Appends the parts of one validated push frame to their partitions, and forwards the parts of
 * primaries that have a replica to the replica's worker. The push handler decodes and checks a
 * frame, hands it here, and answers what comes back; everything about partitions, replicas and
 * memory happens here.
 *
 * <p>Memory: a frame's parts are slices of it, and so are the copies forwarded to replicas, so the
 * frame is charged to the budget once ({@link FrameCharge}) and credited when the last of them is
 * released. A frame a primary forwarded to this worker, when this worker holds every location it
 * names, takes its connection out of the budget's pauses for good ({@link
 * MemoryBudget#exemptForwards}): that primary waits for the answer.
 *
 * <p>Replication: the parts of one frame that go to one {@link ReplicaLink} are appended and
 * forwarded together under the link's lock, so the replica receives each partition's parts in this
 * worker's append order. A part is answered once the replica confirmed it; a part the replica did
 * not confirm is answered REPLICA_FAILED and its writer takes no more data ({@link
 * PartitionWriter#replicaLost}). A replica that refused a forwarded part (SPLIT) takes no more data
 * for that partition ({@link PartitionWriter#forwardedPartRefused}), and a primary whose writer
 * stopped taking data meanwhile confirms none of the parts still in flight: a replica is always a
 * prefix of its primary, without a hole.
 *
 * <p>Chunks: a forwarded frame carries its primary's chunk size, and the replica cuts by it, so
 * both copies share chunk boundaries whatever each worker is configured with.
 *
 * <p>Threads: called on push event loops; the answers of replicas complete on the replica
 * connections' event loops.
 */
public final class FrameAppender {
  private final PartitionStore store;
  private final MemoryBudget budget;

  /**
   * What became of a frame.
   *
   * @param slowDown whether the budget was paused once the frame was appended (this frame's own
   *     bytes may be what crossed the mark): the answer then says SLOW_DOWN for OK parts
   * @param statuses one status per part, in frame order; complete once every replica answered
   *     (never exceptionally)
   */
  public record Appended(boolean slowDown, CompletableFuture<List<PushStatus>> statuses) {}

  /** The store parts are appended to. */
  public PartitionStore store() {
    return store;
  }

  public FrameAppender(PartitionStore store, MemoryBudget budget) {
    this.store = requireNonNull(store, "store is null");
    this.budget = requireNonNull(budget, "budget is null");
  }

  /**
   * Appends (and forwards) every part of a frame whose parts were checked against its body. Borrows
   * {@code body}: each appended or forwarded part takes a retained slice of it.
   *
   * @param keys the location of each part of {@code push}, in order
   * @param from the connection the frame came on, or null
   * @param appNonce the app registration the connection proved, "" for none
   * @throws FaroException UNAUTHENTICATED, before anything is appended, when another registration
   *     of the app reserved a location the frame writes
   */
  public Appended append(
      PushRequest push, List<PartitionKey> keys, ByteBuf body, Channel from, String appNonce) {
    List<Part> parts = locate(push, keys, body, appNonce);
    if (push.getReplica() && from != null && allHeld(parts)) {
      // A valid frame for replica locations this worker holds: a primary forwards on this
      // connection, and waits for the answer (see MemoryBudget#exemptForwards).
      budget.exemptForwards(from);
    }
    int forwardedParts = (int) parts.stream().filter(p -> p.link() != null).count();
    // The parts pin the whole frame until the last is written, and so do the slices forwarded to
    // replicas until their peer answers: charge the frame once, released by all of them.
    FrameCharge charge =
        new FrameCharge(budget, body.readableBytes(), parts.size() + forwardedParts);
    return new FrameAppend(push, body, parts, charge).run();
  }

  private static boolean allHeld(List<Part> parts) {
    return !parts.isEmpty() && parts.stream().allMatch(p -> p.writer() != null);
  }

  /** One part of the frame: where it goes, and where in the body it is. */
  private record Part(
      int index,
      PartitionKey key,
      PartitionWriter writer,
      ReplicaLink link,
      PushPart meta,
      int offset) {
    int length() {
      return meta.getLength();
    }
  }

  /** Each part's writer (null: not held here) and, for a primary with a replica, its link. */
  private List<Part> locate(
      PushRequest push, List<PartitionKey> keys, ByteBuf body, String appNonce) {
    List<Part> parts = new ArrayList<>(keys.size());
    int offset = body.readerIndex();
    for (int i = 0; i < keys.size(); i++) {
      PartitionWriter writer = store.writer(keys.get(i), appNonce).orElse(null);
      // A frame forwarded to this worker is never forwarded further.
      ReplicaLink link = writer == null || push.getReplica() ? null : writer.replica().orElse(null);
      parts.add(new Part(i, keys.get(i), writer, link, push.getParts(i), offset));
      offset += push.getParts(i).getLength();
    }
    return parts;
  }

  /** The appending of one frame. */
  private final class FrameAppend {
    private final PushRequest push;
    private final ByteBuf body;
    private final List<Part> parts;
    private final FrameCharge charge;
    // Parts whose primary has a replica, by link, each list in frame order.
    private final Map<ReplicaLink, List<Part>> forwarded = new LinkedHashMap<>();
    // Filled on this thread, and for forwarded parts on the replica connections' event loops.
    private final PushStatus[] statuses;
    // A forwarded frame's partitions are cut by their primary's chunk size, not this worker's.
    private final long chunkSize;

    FrameAppend(PushRequest push, ByteBuf body, List<Part> parts, FrameCharge charge) {
      this.push = push;
      this.body = body;
      this.parts = parts;
      this.charge = charge;
      this.statuses = new PushStatus[parts.size()];
      this.chunkSize =
          push.getReplica() && push.getChunkSize() > 0 ? push.getChunkSize() : store.chunkSize();
      for (Part part : parts) {
        if (part.link() != null) {
          forwarded.computeIfAbsent(part.link(), l -> new ArrayList<>()).add(part);
        }
      }
    }

    Appended run() {
      for (Part part : parts) {
        if (part.link() == null) {
          appendHere(part);
        }
      }
      List<CompletableFuture<Void>> confirmations = new ArrayList<>(forwarded.size());
      forwarded.forEach((link, linked) -> confirmations.add(appendAndForward(link, linked)));
      // Read once after appending: this frame's own bytes may be what crossed the mark.
      boolean slowDown = budget.shouldSlowDown();
      CompletableFuture<List<PushStatus>> answered =
          confirmations.isEmpty()
              ? CompletableFuture.completedFuture(List.of(statuses))
              : CompletableFuture.allOf(confirmations.toArray(CompletableFuture[]::new))
                  .handle((done, error) -> List.of(statuses));
      return new Appended(slowDown, answered);
    }

    private PushStatus append(Part part) {
      return store.append(
          part.key(),
          part.writer(),
          body.retainedSlice(part.offset(), part.length()),
          charge,
          chunkSize);
    }

    /** A part without a replica to forward to: a primary's without one, or a replica's own. */
    private void appendHere(Part part) {
      PushStatus status = append(part);
      statuses[part.index()] = status;
      if (push.getReplica() && part.writer() != null && status == PushStatus.SPLIT) {
        part.writer().forwardedPartRefused("answered " + status);
      }
    }

    /**
     * Appends {@code linked} and forwards the appended ones to the replica on {@code link}, both
     * under the link's lock. Completes once the replica answered; a part the replica did not
     * confirm is answered REPLICA_FAILED, and its writer takes no more data.
     */
    private CompletableFuture<Void> appendAndForward(ReplicaLink link, List<Part> linked) {
      List<Part> sent = new ArrayList<>(linked.size());
      List<PushStatus> own = new ArrayList<>(linked.size());
      CompletableFuture<Frame> answer;
      synchronized (link.lock()) {
        // The replica cuts by this worker's chunk size (a frame is forwarded only from a primary).
        PushRequest.Builder meta =
            PushRequest.newBuilder()
                .setShuffle(push.getShuffle())
                .setReplica(true)
                .setChunkSize(store.chunkSize());
        CompositeByteBuf copy = body.alloc().compositeDirectBuffer(linked.size());
        for (Part part : linked) {
          PushStatus status = append(part);
          if (status == PushStatus.OK || status == PushStatus.SOFT_SPLIT) {
            sent.add(part);
            own.add(status);
            meta.addParts(part.meta());
            copy.addComponent(true, body.retainedSlice(part.offset(), part.length()));
            statuses[part.index()] = PushStatus.REPLICA_FAILED; // until the replica confirms
          } else {
            statuses[part.index()] = status;
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
      return answer.handle(
          (frame, error) -> {
            try {
              confirm(
                  sent,
                  own,
                  frame == null ? List.of() : frame.meta(PushResponse.class).getStatusesList(),
                  error);
            } finally {
              if (frame != null) {
                frame.release();
              }
              // The forwarded slices were written (or dropped) by now: their share of the charge
              // goes.
              sent.forEach(p -> charge.partReleased());
            }
            return null;
          });
    }

    /**
     * Settles the status of each part in {@code sent} (this worker's own outcome in {@code own}) by
     * the replica's answer: {@code replicaStatuses}, one per part, or {@code error}.
     */
    private void confirm(
        List<Part> sent, List<PushStatus> own, List<PushStatusP> replicaStatuses, Throwable error) {
      for (int k = 0; k < sent.size(); k++) {
        Part part = sent.get(k);
        PushStatusP r =
            k < replicaStatuses.size()
                ? replicaStatuses.get(k)
                : PushStatusP.PUSH_STATUS_UNSPECIFIED;
        // A part the replica took after it refused an earlier one of the partition (a frame
        // forwarded before that refusal was answered) is not confirmed either: the replica is
        // no longer a prefix of the primary from that refusal on.
        boolean confirmed =
            (r == PushStatusP.OK || r == PushStatusP.SLOW_DOWN || r == PushStatusP.SOFT_SPLIT)
                && !part.writer().stoppedTakingData();
        if (confirmed) {
          // The replica's split (its disk filling, its own threshold) moves the client too.
          statuses[part.index()] =
              r == PushStatusP.SOFT_SPLIT && own.get(k) == PushStatus.OK
                  ? PushStatus.SOFT_SPLIT
                  : own.get(k);
        } else {
          part.writer()
              .replicaLost(
                  error != null
                      ? String.valueOf(Futures.unwrap(error).getMessage())
                      : "replica answered " + r);
        }
      }
    }
  }
}
