package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Identity;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.NetworkSettings;
import io.faro.common.version.Compatibility;
import io.faro.common.version.FeatureLevel;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.StateCommand.SetFeatureLevel;
import io.faro.master.state.StateReader;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MasterStatusResponse;
import io.faro.proto.SetFeatureLevelRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's feature level (see {@link FeatureLevel}), on the leader: a new group starts at the
 * highest level of this release (the first entry of its log); an operator raises the level ({@code
 * bin/faro admin feature-level set}) and, with {@code faro.master.feature.level.auto}, the leader
 * raises it by itself after a roll, in both cases only to a level every master of the group
 * supports, as each says in its status (a master from before feature levels supports level 1 only;
 * one that does not answer supports nothing new).
 */
public final class FeatureLevels implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FeatureLevels.class);

  /** How often the leader looks whether it can raise the level, with auto on. */
  static final Duration AUTO_INTERVAL = Duration.ofSeconds(15);

  /** How long a master's status may take before it counts as not answering. */
  private static final Duration PEER_TIMEOUT = Duration.ofSeconds(5);

  private final RaftNode raft;
  private final RaftCalls calls;
  private final ClientPool peers;
  private final Settings settings;
  private final ScheduledExecutorService scheduler;

  /**
   * @param initial faro.master.feature.level.initial: the level a new group starts at
   * @param auto faro.master.feature.level.auto: whether the leader raises the level by itself
   */
  public record Settings(int initial, boolean auto) {
    public Settings {
      if (!FeatureLevel.supported(initial)) {
        throw new IllegalArgumentException("feature level " + initial + " is not supported here");
      }
    }
  }

  /**
   * @param network how this master connects to the other masters' RPC ports, as a member of the
   *     cluster
   */
  public FeatureLevels(
      RaftNode raft, Clock clock, NetworkSettings network, Settings settings, String name) {
    this.raft = requireNonNull(raft, "raft is null");
    this.calls = new RaftCalls(raft, clock);
    this.peers =
        new ClientPool(
            name + "-peers",
            network,
            AuthOptions.Credentials.as(Identity.CLUSTER, network.auth()),
            address -> Handshake.MASTER);
    this.settings = requireNonNull(settings, "settings is null");
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, name + "-feature-level");
              t.setDaemon(true);
              return t;
            });
    // Before Raft starts: a group of one master leads at once.
    // With auto on, a new leader also looks at once: a roll ends with the leader's restart.
    raft.onLeaderReady(
        () ->
            scheduler.execute(
                () -> {
                  bootstrapIfNew();
                  if (settings.auto()) {
                    raiseIfPossible();
                  }
                }));
    if (settings.auto()) {
      scheduler.scheduleWithFixedDelay(
          this::raiseIfPossible,
          AUTO_INTERVAL.toMillis(),
          AUTO_INTERVAL.toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  /** The cluster's level as this master applied it. */
  public int level() {
    return raft.read(StateReader::featureLevel);
  }

  /**
   * A new group (nothing ever applied) starts at faro.master.feature.level.initial, by default this
   * release's highest level. A master of the group that cannot apply it stops, saying so; a group
   * that already holds state (made by a release before feature levels) stays at 1 until raised. At
   * level 1 nothing is written: the releases before feature levels read that log as their own.
   */
  private void bootstrapIfNew() {
    if (settings.initial() == 1 || !raft.read(StateReader::neverApplied)) {
      return;
    }
    calls
        .submit(new SetFeatureLevel(settings.initial(), true))
        .whenComplete(
            (applied, error) -> {
              if (error == null) {
                LOG.info("A new group of masters: feature level {}", settings.initial());
              } else {
                LOG.warn(
                    "The group stays at feature level {}: {}",
                    level(),
                    Futures.unwrap(error).getMessage());
              }
            });
  }

  /** With auto on, on the leader: raises the level to the highest every master supports. */
  private void raiseIfPossible() {
    if (!raft.isLeaderReady() || level() >= FeatureLevel.MAX) {
      return;
    }
    try {
      Support support = groupSupport().get(PEER_TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS);
      if (support.highest() > level()) {
        raise(support.highest(), support).get(PEER_TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS);
        LOG.info(
            "Raised the feature level to {} (faro.master.feature.level.auto): every master"
                + " supports it",
            support.highest());
      }
    } catch (Exception e) {
      LOG.debug("Not raising the feature level now: {}", e.toString());
    }
  }

  /**
   * Raises the level to {@code request.level} (an operator's request, on the leader): refused when
   * lower than the current one, or when a master of the group does not support it (naming the
   * master, its release and its highest level). Completes with {@code status} once applied.
   */
  CompletableFuture<MasterStatusResponse> set(
      SetFeatureLevelRequest request, Supplier<MasterStatusResponse> status) {
    calls.requireLeader("a feature level change");
    int wanted = request.getLevel();
    int current = level();
    if (wanted < current) {
      throw new FaroException(
          ErrorCode.INVALID_REQUEST,
          "the cluster is at feature level "
              + current
              + ": a level is never lowered (a roll back is possible only before it is raised)");
    }
    if (wanted == current) {
      return CompletableFuture.completedFuture(status.get());
    }
    if (!FeatureLevel.supported(wanted)) {
      throw new FaroException(
          ErrorCode.UNSUPPORTED_VERSION,
          "feature level "
              + wanted
              + " is unknown to the leader's release (Faro "
              + Compatibility.release()
              + " supports levels "
              + FeatureLevel.MIN
              + " to "
              + FeatureLevel.MAX
              + "): roll every master to a release that supports it first");
    }
    return groupSupport()
        .thenCompose(support -> raise(wanted, support))
        .thenApply(
            applied -> {
              LOG.info("Raised the feature level from {} to {} (an operator)", current, wanted);
              return status.get();
            });
  }

  private CompletableFuture<?> raise(int level, Support support) {
    if (!support.refusals(level).isEmpty()) {
      throw new FaroException(
          ErrorCode.UNSUPPORTED_VERSION,
          "feature level "
              + level
              + " needs every master of the group to support it: "
              + String.join("; ", support.refusals(level)));
    }
    return calls.submit(new SetFeatureLevel(level, false));
  }

  /** What each master of the group supports: this one's release, and each other's status. */
  private CompletableFuture<Support> groupSupport() {
    Map<String, HostPort> others = raft.otherMasters();
    List<CompletableFuture<Member>> asked = new ArrayList<>();
    asked.add(
        CompletableFuture.completedFuture(
            new Member(raft.masterId(), Compatibility.release(), FeatureLevel.MAX, "")));
    others.forEach(
        (id, address) ->
            asked.add(
                peers
                    .call(
                        address,
                        MasterStatusRequest.getDefaultInstance(),
                        MasterStatusResponse.class,
                        PEER_TIMEOUT)
                    .handle(
                        (s, error) ->
                            error != null
                                ? new Member(id, "", 0, "did not answer: " + Futures.unwrap(error))
                                : new Member(
                                    id,
                                    s.getRelease().isEmpty()
                                        ? "a release before feature levels"
                                        : s.getRelease(),
                                    s.getMaxFeatureLevel() == 0 ? 1 : s.getMaxFeatureLevel(),
                                    ""))));
    return CompletableFuture.allOf(asked.toArray(CompletableFuture[]::new))
        .thenApply(done -> new Support(asked.stream().map(CompletableFuture::join).toList()));
  }

  /** One master's answer: its release and highest level, or why it gave none. */
  private record Member(String id, String release, int highest, String failure) {}

  /** The group's answers. */
  private record Support(List<Member> members) {
    /** The highest level every master supports. */
    int highest() {
      return members.stream().mapToInt(Member::highest).min().orElse(1);
    }

    /** Why the masters that do not support {@code level} do not. */
    List<String> refusals(int level) {
      return members.stream()
          .filter(m -> m.highest() < level)
          .map(
              m ->
                  m.failure().isEmpty()
                      ? "master "
                          + m.id()
                          + " ("
                          + m.release()
                          + ") supports up to level "
                          + m.highest()
                      : "master " + m.id() + " " + m.failure())
          .toList();
    }
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
    peers.close();
  }
}
