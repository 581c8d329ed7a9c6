package io.faro.master.raft;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.Futures;
import io.faro.master.MasterServerSettings;
import io.faro.proto.MasterCommandResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * Hands {@link RaftNode}'s requests to this master's own Ratis server, with no network client in
 * between: entries to log, read barriers and leader transfers, each under one call id of this
 * master's client id. Turns what Ratis answers into Faro's errors: a follower, a leader not ready
 * or an election under way refuse with {@link NotLeaderException} (naming the leader), a closed
 * server with SHUTTING_DOWN, a request not applied in time with TIMEOUT. Thread-safe.
 */
final class RaftRequests {
  private final MasterServerSettings config;
  private final Function<String, NotLeaderException> notLeader;
  private final ClientId clientId = ClientId.randomId();
  private final AtomicLong callIds = new AtomicLong();

  /**
   * @param notLeader the refusal to answer when this master cannot serve the named request
   */
  RaftRequests(MasterServerSettings config, Function<String, NotLeaderException> notLeader) {
    this.config = requireNonNull(config, "config is null");
    this.notLeader = requireNonNull(notLeader, "notLeader is null");
  }

  /**
   * Submits {@code data} as a request of {@code type} to {@code server}; completes with the
   * successful reply, or fails with the Faro error for {@code what} (faro.network.request.timeout
   * bounds the wait).
   */
  CompletableFuture<RaftClientReply> send(
      RaftServer server, byte[] data, RaftClientRequest.Type type, String what) {
    RaftClientRequest request =
        RaftClientRequest.newBuilder()
            .setClientId(clientId)
            .setServerId(server.getId())
            .setGroupId(RaftNode.GROUP_ID)
            .setCallId(callIds.incrementAndGet())
            .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(data)))
            .setType(type)
            .build();
    CompletableFuture<RaftClientReply> reply;
    try {
      reply = server.submitClientRequestAsync(request);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(failure(e, what));
    }
    Duration timeout = config.network().requestTimeout();
    return reply
        .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
        .handle(
            (r, error) -> {
              if (error != null) {
                Throwable cause = Futures.unwrap(error);
                throw failure(
                    cause instanceof TimeoutException
                        ? new FaroException(
                            ErrorCode.TIMEOUT,
                            what
                                + " was not applied within "
                                + timeout.toMillis()
                                + "ms (faro.network.request.timeout)")
                        : cause,
                    what);
              }
              if (!r.isSuccess()) {
                throw failure(r.getException(), what);
              }
              return r;
            });
  }

  /**
   * Asks {@code server}, the leader, to hand leadership to master {@code to}, a member of the
   * group; completes when {@code to} leads, fails with TIMEOUT when it did not within {@code
   * timeout}.
   */
  CompletableFuture<Void> transferLeadership(RaftServer server, String to, Duration timeout) {
    TransferLeadershipRequest request =
        new TransferLeadershipRequest(
            clientId,
            server.getId(),
            RaftNode.GROUP_ID,
            callIds.incrementAndGet(),
            RaftPeerId.valueOf(to),
            timeout.toMillis());
    CompletableFuture<RaftClientReply> reply;
    try {
      reply = server.transferLeadershipAsync(request);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(failure(e, "a leader transfer"));
    }
    return reply.handle(
        (r, error) -> {
          Throwable cause =
              error != null ? Futures.unwrap(error) : r.isSuccess() ? null : r.getException();
          if (cause == null) {
            return null;
          }
          if (cause instanceof TransferLeadershipException) {
            throw new FaroException(
                ErrorCode.TIMEOUT,
                "leadership did not move from "
                    + config.masterId()
                    + " to "
                    + to
                    + " within "
                    + timeout.toMillis()
                    + "ms: "
                    + cause.getMessage(),
                cause);
          }
          throw failure(cause, "a leader transfer");
        });
  }

  /** The result of a logged command, as the state machine replied it. */
  static MasterCommandResult commandResult(RaftClientReply reply) {
    try {
      return MasterCommandResult.parseFrom(reply.getMessage().getContent().asReadOnlyByteBuffer());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The Faro error for {@code what}, which failed with {@code error}. */
  FaroException failure(Throwable error, String what) {
    if (error instanceof FaroException fe) {
      return fe;
    }
    if (error instanceof org.apache.ratis.protocol.exceptions.NotLeaderException
        || error instanceof LeaderNotReadyException
        || error instanceof LeaderSteppingDownException
        || error instanceof ServerNotReadyException
        // A linearizable read needs a known leader to confirm the read index (an election).
        || error instanceof ReadIndexException) {
      return notLeader.apply(what);
    }
    if (error instanceof AlreadyClosedException) {
      return new FaroException(
          ErrorCode.SHUTTING_DOWN,
          "master " + config.masterId() + " is shutting down; cannot serve " + what,
          error);
    }
    if (error instanceof RaftException && error.getCause() instanceof FaroException fe) {
      return fe;
    }
    return new FaroException(
        ErrorCode.INTERNAL, what + " failed on master " + config.masterId() + ": " + error, error);
  }
}
