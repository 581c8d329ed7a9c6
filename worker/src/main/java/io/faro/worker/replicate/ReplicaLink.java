package io.faro.worker.replicate;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Frame;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.TransportClient;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ordered stream of parts this worker, as primary, forwards to one peer worker that holds their
 * replicas. Frames go out in the order {@link #forward} is called and the peer appends them in
 * arrival order, so that each replica file receives its parts in the primary's append order and
 * cuts the same chunks.
 *
 * <p>A link that fails once (connection lost with a forward unanswered, a forward failed) stays
 * failed: the writers bound to it stop taking data, so a replica file is always a prefix of its
 * primary and never has a hole. New reservations get a new link from {@link ReplicaLinks}. A
 * connection the peer closed while nothing was in flight (idle) is replaced, not a failure.
 *
 * <p>Threads: {@link #forward} is called by push event loops under this link's lock (see {@link
 * #lock()}), together with the appends whose parts it carries. Writes are handed to the
 * connection's own event loop, which is never one of the callers', so their order holds.
 */
public final class ReplicaLink {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaLink.class);

  private final HostPort peer;
  private final ClientPool pool;
  private final Duration timeout;
  private final Object lock = new Object();

  private volatile String failure;
  // @GuardedBy("lock")
  private TransportClient connection;
  // @GuardedBy("lock"): forwards waiting for the connection, in call order
  private final Deque<Waiting> waiting = new ArrayDeque<>();
  // @GuardedBy("lock")
  private boolean connecting;
  // Forwards sent and not answered yet (answers come on the connection's event loop).
  private final AtomicInteger unanswered = new AtomicInteger();

  private record Waiting(Message meta, ByteBuf body, CompletableFuture<Frame> answer) {}

  ReplicaLink(HostPort peer, ClientPool pool, Duration timeout) {
    this.peer = requireNonNull(peer, "peer is null");
    this.pool = requireNonNull(pool, "pool is null");
    this.timeout = requireNonNull(timeout, "timeout is null");
  }

  public HostPort peer() {
    return peer;
  }

  /** The lock under which appends and their forward happen, so that both follow one order. */
  public Object lock() {
    return lock;
  }

  /** Whether this link failed; writers bound to it then refuse data. */
  public boolean failed() {
    return failure != null;
  }

  /** Marks the link failed (first reason wins). */
  public void fail(String reason) {
    if (failure == null) {
      failure = reason;
      LOG.warn("Replication to {} failed, its partitions split away: {}", peer, reason);
    }
  }

  /**
   * Sends one frame of parts to the peer, after every frame forwarded before. Call with {@link
   * #lock()} held. Takes ownership of {@code body}. The answer frame belongs to the caller.
   */
  public CompletableFuture<Frame> forward(Message meta, ByteBuf body) {
    CompletableFuture<Frame> answer = new CompletableFuture<>();
    if (failed()) {
      ReferenceCountUtil.safeRelease(body);
      answer.completeExceptionally(
          new FaroException(
              ErrorCode.CONNECTION_FAILED,
              "replication to " + peer + " failed earlier: " + failure));
      return answer;
    }
    if (connection != null && !connection.isActive() && unanswered.get() == 0) {
      // The peer closed an idle connection (faro.network.idle.timeout): every part forwarded on
      // it was answered, so nothing is missing on the replica. Connect again instead of failing.
      connection = null;
    }
    if (connection != null) {
      send(connection, meta, body, answer);
      return answer;
    }
    waiting.addLast(new Waiting(meta, body, answer));
    if (!connecting) {
      connecting = true;
      pool.client(peer).whenComplete(this::connected);
    }
    return answer;
  }

  private void connected(TransportClient client, Throwable error) {
    synchronized (lock) {
      connecting = false;
      if (error != null) {
        fail("cannot connect: " + Futures.unwrap(error).getMessage());
      } else {
        connection = client;
      }
      while (!waiting.isEmpty()) {
        Waiting w = waiting.pollFirst();
        if (connection == null || failed()) {
          ReferenceCountUtil.safeRelease(w.body());
          w.answer()
              .completeExceptionally(
                  new FaroException(
                      ErrorCode.CONNECTION_FAILED,
                      "replication to " + peer + " failed: " + failure));
        } else {
          send(connection, w.meta(), w.body(), w.answer());
        }
      }
    }
  }

  private void send(
      TransportClient client, Message meta, ByteBuf body, CompletableFuture<Frame> answer) {
    if (!client.isActive()) {
      fail("connection closed");
      ReferenceCountUtil.safeRelease(body);
      answer.completeExceptionally(
          new FaroException(
              ErrorCode.CONNECTION_FAILED, "connection to replica peer " + peer + " closed"));
      return;
    }
    unanswered.incrementAndGet();
    client
        .send(meta, body, timeout)
        .whenComplete(
            (frame, error) -> {
              unanswered.decrementAndGet();
              if (error != null) {
                fail(Futures.unwrap(error).getMessage());
                answer.completeExceptionally(Futures.unwrap(error));
              } else if (!answer.complete(frame)) {
                frame.release();
              }
            });
  }
}
