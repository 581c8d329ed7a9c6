package io.faro.master.raft;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.HostPort;
import io.faro.master.MasterServerSettings;
import io.faro.master.mapping.LogCodec;
import io.faro.master.state.ApplyResult;
import io.faro.master.state.StampedCommand;
import io.faro.master.state.StateReader;
import io.faro.proto.ClusterStatusRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This master's member of the Raft group: starts the Ratis server on the configured peers and
 * storage, submits commands to the local server (no network client: a non-leader refuses with
 * {@link NotLeaderException}, which carries the leader's RPC address), reads the state, and tells
 * whether this master leads. One master and three masters run this same code.
 *
 * <p>Thread-safe. Futures complete on Ratis threads; callers must not block in their callbacks.
 *
 * <p>It owns the Ratis server's lifecycle and answers what it knows of the group; {@link
 * RaftRequests} hands the requests to the server and turns Ratis's failures into Faro's.
 */
public final class RaftNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RaftNode.class);

  /** Every Faro master group has this id, so a restart finds its storage again. */
  static final RaftGroupId GROUP_ID =
      RaftGroupId.valueOf(UUID.nameUUIDFromBytes("faro-master".getBytes(StandardCharsets.UTF_8)));

  private final MasterServerSettings config;
  private final MasterStateMachine stateMachine = new MasterStateMachine();
  private final RaftRequests requests;
  private volatile RaftServer server;
  private volatile RaftServer.Division division;
  private volatile int rpcPort;

  /**
   * @param config the master's settings, with its own Raft port already resolved (not 0)
   */
  public RaftNode(MasterServerSettings config) {
    this.config = requireNonNull(config, "config is null");
    this.requests = new RaftRequests(config, this::notLeader);
  }

  /**
   * Starts the Ratis server; recovers the state from the storage directory when it holds one.
   *
   * @param boundRpcPort this master's RPC port, for leader hints
   */
  public void start(int boundRpcPort) throws IOException {
    this.rpcPort = boundRpcPort;
    RaftGroup group =
        RaftGroup.valueOf(
            GROUP_ID,
            config.peers().stream()
                .map(
                    p ->
                        RaftPeer.newBuilder()
                            .setId(p.id())
                            .setAddress(p.raftAddress().toString())
                            .build())
                .toList());
    boolean existing = Files.isDirectory(config.ratisDir().resolve(GROUP_ID.getUuid().toString()));
    RaftServer built =
        RaftServer.newBuilder()
            .setServerId(RaftPeerId.valueOf(config.masterId()))
            .setGroup(group)
            .setStateMachine(stateMachine)
            .setProperties(RaftSettings.properties(config))
            .setParameters(RaftSettings.parameters(config))
            .setOption(
                existing ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
            .build();
    // Kept before start, so that close() also stops a server whose start failed half-way.
    this.server = built;
    built.start();
    this.division = built.getDivision(GROUP_ID);
    LOG.info(
        "Master {} started Raft on port {} ({} storage in {}), group {}",
        config.masterId(),
        raftPort(),
        existing ? "recovered" : "new",
        config.ratisDir(),
        config.peers());
  }

  /**
   * Waits until this master is a ready leader, or, in a group of several masters, until any master
   * leads. Returns whether that happened within {@code timeout}.
   */
  public boolean awaitLeader(Duration timeout) {
    CompletableFuture<Void> signal =
        config.peers().size() == 1 ? stateMachine.leaderReady() : stateMachine.leaderKnown();
    try {
      signal.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException("leader signal failed", e);
    }
  }

  public int raftPort() {
    RaftServer s = server;
    return s == null ? config.raftPort() : s.getServerRpc().getInetSocketAddress().getPort();
  }

  public String masterId() {
    return config.masterId();
  }

  /** True when this master leads and has applied every committed entry. */
  public boolean isLeaderReady() {
    DivisionInfo info = info();
    return info != null && info.isLeader() && info.isLeaderReady();
  }

  /** The current Raft term, or -1 before start. */
  public long currentTerm() {
    DivisionInfo info = info();
    return info == null ? -1 : info.getCurrentTerm();
  }

  /** Id of the master believed to lead, or empty. */
  public String leaderId() {
    DivisionInfo info = info();
    RaftPeerId leader = info == null ? null : info.getLeaderId();
    return leader == null ? "" : leader.toString();
  }

  /** The leader's RPC {@code host:port}, or empty when no leader or its RPC port is unknown. */
  public String leaderHint() {
    return hintFor(leaderId());
  }

  /** The failure to answer when this master cannot serve {@code what} as leader. */
  public NotLeaderException notLeader(String what) {
    String leader = leaderId();
    String hint = hintFor(leader);
    return new NotLeaderException(
        "master "
            + config.masterId()
            + " cannot serve "
            + what
            + ": it is not the ready leader"
            + (leader.isEmpty()
                ? " (no leader elected yet)"
                : " (leader: " + leader + (hint.isEmpty() ? "" : " at " + hint) + ")"),
        hint);
  }

  private String hintFor(String leaderId) {
    if (leaderId.isEmpty()) {
      return "";
    }
    if (leaderId.equals(config.masterId())) {
      return rpcPort == 0 ? "" : new HostPort(config.advertisedHost(), rpcPort).toString();
    }
    return config.peers().stream()
        .filter(p -> p.id().equals(leaderId))
        .findFirst()
        .flatMap(p -> p.rpcAddress(config.rpcPort()))
        .map(HostPort::toString)
        .orElse("");
  }

  private DivisionInfo info() {
    RaftServer.Division d = division;
    return d == null ? null : d.getInfo();
  }

  /**
   * This master's own view of the group, from its local Raft server (no network, no log entry).
   *
   * @param role leader, follower, candidate, listener, or stopped
   */
  public record NodeStatus(
      String role,
      long term,
      long appliedIndex,
      long commitIndex,
      String leaderId,
      boolean leaderReady,
      long snapshotIndex,
      long logStartIndex) {}

  public NodeStatus status() {
    RaftServer.Division d = division;
    if (d == null) {
      return new NodeStatus("stopped", -1, -1, -1, "", false, -1, -1);
    }
    DivisionInfo info = d.getInfo();
    return new NodeStatus(
        info.getCurrentRole().name().toLowerCase(Locale.ROOT),
        info.getCurrentTerm(),
        info.getLastAppliedIndex(),
        d.getRaftLog().getLastCommittedIndex(),
        leaderId(),
        info.isLeader() && info.isLeaderReady(),
        stateMachine.latestSnapshotIndex(),
        d.getRaftLog().getStartIndex());
  }

  /** Leader changes this master saw since it started. */
  public long leaderChanges() {
    return stateMachine.leaderChanges();
  }

  /** This master's RPC endpoint as it advertises it, or empty before start. */
  public String rpcEndpoint() {
    return rpcPort == 0 ? "" : new HostPort(config.advertisedHost(), rpcPort).toString();
  }

  /**
   * Completes with the reason once this master stopped applying the log (an entry or snapshot of a
   * newer release): the process must stop.
   */
  public CompletableFuture<String> halted() {
    return stateMachine.halted();
  }

  /**
   * Runs {@code listener} each time this master becomes the ready leader, on a Ratis thread: it
   * must return at once. Set before {@link #start}.
   */
  public void onLeaderReady(Runnable listener) {
    stateMachine.onLeaderReady(listener);
  }

  /** The RPC endpoint of every other master of the group, by id (from faro.master.raft.peers). */
  public Map<String, HostPort> otherMasters() {
    Map<String, HostPort> out = new LinkedHashMap<>();
    for (RaftPeerSpec p : config.peers()) {
      if (!p.id().equals(config.masterId())) {
        p.rpcAddress(config.rpcPort()).ifPresent(a -> out.put(p.id(), a));
      }
    }
    return out;
  }

  /** The group as configured: {@code id@host:raftPort[/rpcPort]} of every master. */
  public List<String> peers() {
    return config.peers().stream().map(RaftPeerSpec::toString).toList();
  }

  /**
   * Asks this master, which must be the leader, to hand leadership to {@code to}; completes when
   * {@code to} leads. Fails with NOT_LEADER on a follower, INVALID_REQUEST for an id that is not in
   * the group, TIMEOUT when the transfer did not finish within {@code timeout}.
   */
  public CompletableFuture<Void> transferLeadership(String to, Duration timeout) {
    if (config.peers().stream().noneMatch(p -> p.id().equals(to))) {
      return CompletableFuture.failedFuture(
          new FaroException(
              ErrorCode.INVALID_REQUEST, "no master " + to + " in the group " + peers()));
    }
    RaftServer s = server;
    if (s == null || division == null || !isLeaderReady()) {
      return CompletableFuture.failedFuture(notLeader("a leader transfer"));
    }
    if (to.equals(config.masterId())) {
      return CompletableFuture.completedFuture(null);
    }
    return requests.transferLeadership(s, to, timeout);
  }

  /** Reads the local state under the state machine's read lock (see MasterStateMachine#read). */
  public <T> T read(Function<StateReader, T> reader) {
    return stateMachine.read(reader);
  }

  /** Logs {@code command} through Raft; completes with its result once applied here. */
  public CompletableFuture<ApplyResult> submit(StampedCommand command) {
    byte[] data = LogCodec.encode(command).toByteArray();
    return send(data, RaftClientRequest.writeRequestType(), describe(command))
        .thenApply(reply -> LogCodec.decodeResult(RaftRequests.commandResult(reply)));
  }

  /**
   * A linearizable read barrier (served by the leader only, through Raft): completes with the index
   * applied here once this master's state holds every entry committed before the call. Read the
   * state with {@link #read} after it; nothing of the state travels through Raft.
   */
  public CompletableFuture<Long> readBarrier() {
    byte[] data = ClusterStatusRequest.getDefaultInstance().toByteArray();
    return send(data, RaftClientRequest.readRequestType(), "a state query")
        .thenApply(reply -> reply.getMessage().getContent().asReadOnlyByteBuffer().getLong());
  }

  private CompletableFuture<RaftClientReply> send(
      byte[] data, RaftClientRequest.Type type, String what) {
    RaftServer s = server;
    if (s == null || division == null) {
      return CompletableFuture.failedFuture(notLeader(what));
    }
    return requests.send(s, data, type, what);
  }

  private static String describe(StampedCommand command) {
    return command.command().getClass().getSimpleName();
  }

  @Override
  public void close() throws IOException {
    RaftServer s = server;
    server = null;
    division = null;
    if (s != null) {
      s.close();
      LOG.info("Master {} stopped Raft", config.masterId());
    }
  }
}
