package io.faro.master.raft;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.master.mapping.LogCodec;
import io.faro.master.mapping.SnapshotCodec;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.MasterState;
import io.faro.master.state.MasterStateView;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateReader;
import io.faro.proto.ClusterStatusRequest;
import io.faro.proto.MasterCommand;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis state machine that replicates {@link MasterState}.
 *
 * <ul>
 *   <li>{@link #startTransaction} (leader, before the entry is logged) refuses entries that do not
 *       parse as a well-formed {@code MasterCommand}, so none ever reaches the log.
 *   <li>{@link #applyTransaction} (every master, in log order, on the Ratis apply thread) applies
 *       the command and answers a {@code MasterCommandResult}. It is deterministic; a refused
 *       command is a result, never a failure of the state machine.
 *   <li>{@link #query} serves linearizable reads through Ratis as a barrier: a {@code
 *       ClusterStatusRequest} is answered with the index of the last applied entry only; the caller
 *       then reads what it needs from the local state under the read lock.
 *   <li>{@link #takeSnapshot} writes the state to a file named by term and index, with an MD5
 *       checksum (see {@link SnapshotFiles}); Ratis then purges the log behind it. Loading checks
 *       the checksum.
 * </ul>
 *
 * <p>Thread-safety: the state is written only on the Ratis apply thread (apply, and snapshot loads
 * while apply is paused), always under {@code lock}'s write lock; readers on other threads ({@link
 * #read}, {@link #query}) take the read lock, so they see whole commands only.
 */
public final class MasterStateMachine extends BaseStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(MasterStateMachine.class);

  private final LongAdder leaderChanges = new LongAdder();
  private volatile Runnable onLeaderReady;
  private final SnapshotFiles snapshots = new SnapshotFiles();
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  /**
   * Index of the newest snapshot taken or loaded here, -1 before any: kept in memory so that a
   * status request on an event loop never lists the snapshot directory.
   */
  private volatile long latestSnapshotIndex = -1;

  /**
   * Why this master stopped applying the log (an entry of a newer release), once it did; completed
   * at most once, on the apply thread. Nothing is applied after it: the process stops.
   */
  private final CompletableFuture<String> halted = new CompletableFuture<>();

  /** Guarded by {@code lock}; written only on the Ratis apply thread. */
  private final MasterState state = new MasterState();

  // Startup signals: completed by the first election seen and the first time this master is a
  // ready leader (it applied an entry of its own term, so it holds every committed entry).
  private final CompletableFuture<Void> leaderKnown = new CompletableFuture<>();
  private final CompletableFuture<Void> leaderReady = new CompletableFuture<>();

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
      throws IOException {
    super.initialize(server, groupId, raftStorage);
    snapshots.init(raftStorage);
    getLifeCycle().startAndTransition(this::loadLatestSnapshot);
  }

  /**
   * Ratis pauses the state machine before it installs a snapshot sent by the leader (this master
   * fell behind a purged log, or its storage was wiped), and checks that it is paused before it
   * calls {@link #reinitialize}. Nothing is applied meanwhile.
   */
  @Override
  public void pause() {
    getLifeCycle().transition(LifeCycle.State.PAUSING);
    getLifeCycle().transition(LifeCycle.State.PAUSED);
  }

  /** Called after the leader installed a snapshot on this master: load it and run again. */
  @Override
  public void reinitialize() throws IOException {
    loadLatestSnapshot();
    if (getLifeCycleState() == LifeCycle.State.PAUSED) {
      getLifeCycle().transition(LifeCycle.State.STARTING);
      getLifeCycle().transition(LifeCycle.State.RUNNING);
    }
  }

  @Override
  public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeaderId) {
    leaderChanges.increment();
    if (newLeaderId != null) {
      leaderKnown.complete(null);
    }
  }

  /** Leader changes this master saw since it started (a new leader, or none for a while). */
  long leaderChanges() {
    return leaderChanges.sum();
  }

  @Override
  public void notifyLeaderReady() {
    leaderKnown.complete(null);
    leaderReady.complete(null);
    Runnable listener = onLeaderReady;
    if (listener != null) {
      listener.run();
    }
  }

  /**
   * Runs {@code listener} each time this master becomes the ready leader, on a Ratis thread: it
   * must return at once (hand work to another thread).
   */
  void onLeaderReady(Runnable listener) {
    this.onLeaderReady = listener;
  }

  /** Index of the newest snapshot taken or loaded by this master, -1 when none. Cheap. */
  long latestSnapshotIndex() {
    return latestSnapshotIndex;
  }

  /** Completes once some master of the group is known to lead. */
  CompletableFuture<Void> leaderKnown() {
    return leaderKnown;
  }

  /** Completes the first time this master is the leader and ready to serve. */
  CompletableFuture<Void> leaderReady() {
    return leaderReady;
  }

  @Override
  public StateMachineStorage getStateMachineStorage() {
    return snapshots.storage();
  }

  @Override
  public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
    ByteString data = request.getMessage().getContent();
    TransactionContext context =
        TransactionContext.newBuilder()
            .setStateMachine(this)
            .setClientRequest(request)
            .setLogData(data)
            .build();
    try {
      LogCodec.decode(MasterCommand.parseFrom(data.asReadOnlyByteBuffer()));
    } catch (IOException | RuntimeException e) {
      context.setException(
          new FaroException(
              ErrorCode.INVALID_REQUEST,
              "refused to log a malformed master command: " + e.getMessage(),
              e));
    }
    return context;
  }

  /**
   * Completes with the reason once this master stopped applying the log because an entry needs a
   * newer release (see {@link #applyTransaction}); its process then stops.
   */
  public CompletableFuture<String> halted() {
    return halted;
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext transaction) {
    LogEntryProto entry = transaction.getLogEntry();
    ByteString data = entry.getStateMachineLogEntry().getLogData();
    ApplyResult result;
    lock.writeLock().lock();
    try {
      if (halted.isDone()) {
        // Past an entry this master could not apply: it applies nothing more (its applied index
        // stays before that entry), so that a newer release takes over from there.
        return CompletableFuture.failedFuture(
            new FaroException(ErrorCode.UNSUPPORTED_VERSION, halted.join()));
      }
      result = apply(data, entry);
      if (halted.isDone()) {
        return CompletableFuture.failedFuture(
            new FaroException(ErrorCode.UNSUPPORTED_VERSION, halted.join()));
      }
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    } finally {
      lock.writeLock().unlock();
    }
    byte[] answer = LogCodec.encodeResult(result).toByteArray();
    return CompletableFuture.completedFuture(
        Message.valueOf(UnsafeByteOperations.unsafeWrap(answer)));
  }

  /**
   * Applies one entry. An entry of a newer release (a command kind this one does not know, a
   * feature level beyond it) is never skipped: skipping it would leave this master's state unlike
   * its peers'. This master stops applying instead ({@link #halted}), and says which level or
   * release it needs.
   */
  private ApplyResult apply(ByteString data, LogEntryProto entry) {
    StampedCommand command;
    try {
      command = LogCodec.decode(MasterCommand.parseFrom(data.asReadOnlyByteBuffer()));
    } catch (FaroException e) {
      if (e.code() != ErrorCode.UNSUPPORTED_VERSION) {
        return malformed(entry, e);
      }
      String reason =
          "master "
              + getId()
              + " stopped applying the log at index "
              + entry.getIndex()
              + ": "
              + e.getMessage();
      LOG.error("{}", reason);
      halted.complete(reason);
      return new ApplyResult.Rejected(ErrorCode.UNSUPPORTED_VERSION, reason);
    } catch (IOException | RuntimeException e) {
      return malformed(entry, e);
    }
    return state.apply(command);
  }

  /**
   * A malformed entry: startTransaction keeps such entries out of the log; if one is there anyway
   * (it is no command of any release), every master refuses it the same way rather than stopping
   * the group.
   */
  private static ApplyResult malformed(LogEntryProto entry, Exception e) {
    LOG.error("Refusing malformed master command at log index {}", entry.getIndex(), e);
    return new ApplyResult.Rejected(
        ErrorCode.INTERNAL,
        "malformed master command at log index " + entry.getIndex() + ": " + e.getMessage());
  }

  @Override
  public CompletableFuture<Message> query(Message request) {
    try {
      ClusterStatusRequest.parseFrom(request.getContent().asReadOnlyByteBuffer());
    } catch (IOException e) {
      return CompletableFuture.failedFuture(
          new FaroException(
              ErrorCode.INVALID_REQUEST,
              "master state query is not a ClusterStatusRequest: " + e.getMessage(),
              e));
    }
    // A read barrier: the answer is only the applied index (8 bytes). The caller then reads what
    // it needs from the local state, which is at least this fresh; serializing the whole state
    // per query once made a burst of status requests cost a master 1.3 GB.
    long applied = getLastAppliedTermIndex().getIndex();
    byte[] answer = ByteBuffer.allocate(Long.BYTES).putLong(applied).array();
    return CompletableFuture.completedFuture(
        Message.valueOf(UnsafeByteOperations.unsafeWrap(answer)));
  }

  /**
   * Reads the state on the caller's thread under the read lock. Used by the leader for hot, local
   * reads (heartbeats, placement) that should not go through the Raft request path; {@code reader}
   * must be quick and must not keep the {@link StateReader}.
   */
  public <T> T read(Function<StateReader, T> reader) {
    lock.readLock().lock();
    try {
      return reader.apply(state);
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public long takeSnapshot() throws IOException {
    // Called by Ratis on the apply thread, so the state cannot move while it is copied.
    MasterStateView view;
    TermIndex applied;
    lock.readLock().lock();
    try {
      view = state.view();
      applied = getLastAppliedTermIndex();
    } finally {
      lock.readLock().unlock();
    }
    if (applied == null || applied.getIndex() < 0) {
      return RaftLog.INVALID_LOG_INDEX;
    }
    snapshots.write(SnapshotCodec.encode(view, applied.getTerm(), applied.getIndex()), applied);
    latestSnapshotIndex = applied.getIndex();
    return applied.getIndex();
  }

  private void loadLatestSnapshot() throws IOException {
    SingleFileSnapshotInfo latest = snapshots.latest();
    if (latest == null) {
      LOG.info("{}: no snapshot, the state is rebuilt from the log", getId());
      return;
    }
    MasterStateView view;
    try {
      view = SnapshotCodec.decode(snapshots.read(latest));
    } catch (FaroException e) {
      if (e.code() != ErrorCode.UNSUPPORTED_VERSION) {
        throw e;
      }
      // A master too old for its group: it neither starts nor installs what it would misread.
      String reason = "master " + getId() + " cannot load its snapshot: " + e.getMessage();
      halted.complete(reason);
      throw new IOException(reason, e);
    }
    lock.writeLock().lock();
    try {
      state.replaceWith(view);
      setLastAppliedTermIndex(latest.getTermIndex());
      latestSnapshotIndex = latest.getIndex();
    } finally {
      lock.writeLock().unlock();
    }
    LOG.info(
        "{}: loaded snapshot {}: {} workers, {} apps, {} shuffles",
        getId(),
        latest.getTermIndex(),
        view.workers().size(),
        view.apps().size(),
        view.shuffles().size());
  }
}
