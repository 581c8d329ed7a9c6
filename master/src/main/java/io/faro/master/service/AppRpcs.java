package io.faro.master.service;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.admission.AppProfile;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.log.LogSafe;
import io.faro.master.mapping.ProtoMapper;
import io.faro.master.raft.RaftNode;
import io.faro.master.state.RegisteredApp;
import io.faro.master.state.StateCommand;
import io.faro.master.state.StateReader;
import io.faro.proto.AppHeartbeatRequest;
import io.faro.proto.MessageType;
import io.faro.proto.RegisterAppRequest;
import io.faro.proto.RegisterAppResponse;
import io.faro.proto.UnregisterAppRequest;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The applications' RPCs: registration (admitted by the rules, bounded per cluster, host and user;
 * with authentication on, the registration's nonce and the app's secret), heartbeats (a follower
 * keeps the time for when it leads; a leader re-registers an app it removed meanwhile), and
 * unregistering. Also which connection may act on an app: its registration's.
 */
final class AppRpcs {
  private final RaftCalls calls;
  private final RaftNode raft;
  private final LoadView loads;
  private final MasterRequestHandler.Limits limits;
  private final AuthSettings auth;
  private final AdmissionService admission;

  AppRpcs(
      RaftCalls calls,
      LoadView loads,
      MasterRequestHandler.Limits limits,
      AuthSettings auth,
      AdmissionService admission) {
    this.calls = requireNonNull(calls, "calls is null");
    this.raft = calls.raft();
    this.loads = requireNonNull(loads, "loads is null");
    this.limits = requireNonNull(limits, "limits is null");
    this.auth = requireNonNull(auth, "auth is null");
    this.admission = requireNonNull(admission, "admission is null");
  }

  /** Refused unless {@code who} is the registration of {@code appId} that this master holds. */
  Optional<String> refusal(String appId, Identity who, MessageType type) {
    String nonce;
    try {
      AppId app = new AppId(appId);
      nonce =
          raft.read(
              state -> {
                RegisteredApp registered = state.apps().get(app);
                return registered == null ? "" : registered.nonce();
              });
    } catch (IllegalArgumentException e) {
      return Optional.of(type + " names no valid app: " + e.getMessage());
    }
    return Identity.requireApp(appId, nonce, who, type);
  }

  /**
   * Registers an app from {@code host}. With authentication on, the registration's nonce is made
   * from the driver's token and the answer carries the app's secret; an app id registered with
   * another token is refused (another driver holds it).
   */
  CompletableFuture<Message> register(RegisterAppRequest request, String host) {
    AppId app = ProtoMapper.appId(request.getAppId());
    AppProfile profile = ProtoMapper.profile(request.getProfile()).withHost(host);
    if (!auth.enabled()) {
      return register(app, "", profile, true);
    }
    byte[] token = request.getRegistrationToken().toByteArray();
    if (token.length != AppSecrets.TOKEN_BYTES) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "this cluster authenticates applications (faro.auth.enabled) and app "
              + app
              + " sent no registration token: its Faro client is older than the cluster's");
    }
    String nonce = AppSecrets.nonce(token);
    Secret cluster = auth.cluster().orElseThrow();
    return register(app, nonce, profile, true)
        .thenApply(
            registered ->
                RegisterAppResponse.newBuilder()
                    .setAppNonce(nonce)
                    .setAppSecret(
                        ByteString.copyFrom(AppSecrets.derive(cluster, app, nonce).toBytes()))
                    .build());
  }

  /**
   * The registration of {@code app} with {@code nonce} ("" without authentication), if the
   * admission rules admit a new app of {@code profile} (when {@code admit}: not for an app that
   * registered before and heartbeats after the masters removed it).
   */
  private CompletableFuture<Message> register(
      AppId app, String nonce, AppProfile profile, boolean admit) {
    String held = raft.read(state -> heldNonce(state.apps().get(app)));
    if (held != null && !held.equals(nonce)) {
      throw anotherRegistration(app, held);
    }
    // On the leader, as the limit below: a refused app is never logged.
    if (admit) {
      admission.checkAdmitted(app, profile);
    }
    // Checked on the leader, not in the replicated apply: masters may be configured differently
    // during a rolling change, and the state must not diverge. Racing registrations may overshoot
    // the limit by the few in flight.
    String refusal = raft.read(state -> state.hasApp(app) ? null : overLimit(state, profile));
    if (refusal != null) {
      throw new FaroException(
          ErrorCode.LIMIT_EXCEEDED, "cannot register app " + app + ": " + refusal);
    }
    return calls
        .submit(new StateCommand.RegisterApp(app, nonce, profile))
        .thenApply(
            applied -> {
              // Two drivers racing: the first registration's nonce stays.
              String kept = raft.read(state -> heldNonce(state.apps().get(app)));
              if (kept != null && !kept.equals(nonce)) {
                throw anotherRegistration(app, kept);
              }
              loads.appHeartbeat(app, calls.now());
              return RaftCalls.EMPTY;
            });
  }

  /**
   * Why a new registration of {@code profile} would take the cluster, its host or its user over
   * their limits, or null.
   */
  private String overLimit(StateReader state, AppProfile profile) {
    if (state.apps().size() >= limits.maxApps()) {
      return limits.maxApps()
          + " apps are registered, the most this cluster takes (faro.master.max.apps)";
    }
    int fromHost = 0;
    int ofUser = 0;
    for (RegisteredApp a : state.apps().values()) {
      if (!profile.host().isEmpty() && a.profile().host().equals(profile.host())) {
        fromHost++;
      }
      if (!profile.user().isEmpty() && a.profile().user().equals(profile.user())) {
        ofUser++;
      }
    }
    if (fromHost >= limits.maxAppsPerHost()) {
      return "host "
          + LogSafe.text(profile.host())
          + " has registered "
          + fromHost
          + " apps that run, the most one host may (faro.master.max.apps.per.host)";
    }
    if (ofUser >= limits.maxAppsPerUser()) {
      return "user "
          + LogSafe.text(profile.user())
          + " runs "
          + ofUser
          + " registered apps, the most one user may (faro.master.max.apps.per.user)";
    }
    return null;
  }

  private static String heldNonce(RegisteredApp registered) {
    return registered == null ? null : registered.nonce();
  }

  private static FaroException anotherRegistration(AppId app, String held) {
    return new FaroException(
        ErrorCode.UNAUTHENTICATED,
        held.isEmpty()
            ? "app "
                + app
                + " is registered already, from before faro.auth.enabled was turned on or off:"
                + " change that setting only while no application runs"
            : "app "
                + app
                + " is registered already by another driver (another registration token)");
  }

  /** An app's heartbeat, on connection {@code who} from {@code host}. */
  CompletableFuture<Message> heartbeat(AppHeartbeatRequest request, Identity who, String host) {
    AppId app = ProtoMapper.appId(request.getAppId());
    if (!raft.isLeaderReady()) {
      // Apps heartbeat every master; a follower keeps the time for when it leads (of apps it does
      // not hold yet, a bounded number).
      record Known(boolean known, int apps) {}
      Known known = raft.read(state -> new Known(state.hasApp(app), state.apps().size()));
      if (known.known()) {
        loads.appHeartbeat(app, calls.now());
      } else {
        loads.unknownAppHeartbeat(app, calls.now(), known.apps());
      }
      return CompletableFuture.completedFuture(RaftCalls.EMPTY);
    }
    if (!raft.read(state -> state.hasApp(app))) {
      // The app was removed (e.g. timed out during a long pause) or the master never saw it: with
      // authentication on, the heartbeat came from its registration (see refusal), whose nonce
      // it keeps. Admitted when it first registered: the rules are not asked again (a running app
      // is never cut off); its heartbeat says who runs it (an older client's says nothing).
      return register(
          app,
          who.kind() == Identity.Kind.APP ? who.nonce() : "",
          ProtoMapper.profile(request.getProfile()).withHost(host),
          false);
    }
    loads.appHeartbeat(app, calls.now());
    return CompletableFuture.completedFuture(RaftCalls.EMPTY);
  }

  CompletableFuture<Message> unregister(UnregisterAppRequest request) {
    AppId app = ProtoMapper.appId(request.getAppId());
    return calls
        .submit(new StateCommand.RemoveApp(app, "unregistered by the application"))
        .thenApply(
            applied -> {
              loads.forgetApp(app);
              return RaftCalls.EMPTY;
            });
  }
}
