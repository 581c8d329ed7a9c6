package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateCommand;
import io.faro.proto.EmptyResponse;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/** What every group of master RPCs does with the replicated state: submit, check, refuse. */
final class RaftCalls {
  static final EmptyResponse EMPTY = EmptyResponse.getDefaultInstance();

  private final RaftNode raft;
  private final Clock clock;

  RaftCalls(RaftNode raft, Clock clock) {
    this.raft = requireNonNull(raft, "raft is null");
    this.clock = requireNonNull(clock, "clock is null");
  }

  RaftNode raft() {
    return raft;
  }

  /** The leader's clock, which stamps commands and heartbeats. */
  long now() {
    return clock.millis();
  }

  /** Stamps the leader's time, logs the command, and fails the future when it was refused. */
  CompletableFuture<ApplyResult.Applied> submit(StateCommand command) {
    return raft.submit(new StampedCommand(clock.millis(), command))
        .thenApply(
            result -> {
              if (result instanceof ApplyResult.Rejected rejected) {
                throw new FaroException(rejected.code(), rejected.message());
              }
              return (ApplyResult.Applied) result;
            });
  }

  /** NOT_LEADER (retryable, with the leader's hint) unless this master leads and is ready. */
  void requireLeader(String what) {
    if (!raft.isLeaderReady()) {
      throw raft.notLeader(what);
    }
  }

  /** The value {@code constructor} makes; INVALID_REQUEST with its reason if it refuses. */
  static <T> T parse(Supplier<T> constructor) {
    try {
      return constructor.get();
    } catch (IllegalArgumentException e) {
      throw new FaroException(ErrorCode.INVALID_REQUEST, e.getMessage());
    }
  }
}
