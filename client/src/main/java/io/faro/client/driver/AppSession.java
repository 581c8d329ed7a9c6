package io.faro.client.driver;

import static java.util.Objects.requireNonNull;

import io.faro.client.ClientSettings;
import io.faro.client.protocol.DriverProto;
import io.faro.common.admission.AppProfile;
import io.faro.common.auth.AppSecrets;
import io.faro.common.auth.AuthOptions;
import io.faro.common.auth.Identity;
import io.faro.common.auth.Secret;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.AppId;
import io.faro.common.master.MasterClient;
import io.faro.common.network.Futures;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The app's standing with the masters: registered at start (a job must never silently run without
 * the shuffle service it was configured for), kept alive by a heartbeat to every master,
 * unregistered at close. The heartbeat thread also runs {@code onBeat} (the lifecycle manager's
 * periodic checks) before each beat.
 */
final class AppSession implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AppSession.class);

  private final AppId app;
  private final MasterClient master;
  private final Runnable onBeat;
  private final ScheduledExecutorService heartbeat;
  private final Optional<AuthOptions.Credentials> credentials;

  /** Who runs the app, sent with its registration and every heartbeat. */
  private final AppProfile profile;

  /** Longest user, queue or name the masters take (their ProtoMapper.MAX_PROFILE_FIELD). */
  static final int MAX_PROFILE_FIELD = 1024;

  private static String bounded(String value) {
    return value.length() <= MAX_PROFILE_FIELD ? value : value.substring(0, MAX_PROFILE_FIELD);
  }

  /** Whether the last heartbeat reached some master (the registration did, to begin with). */
  private volatile boolean mastersReachable = true;

  /**
   * Registers {@code app} with the masters, trying for faro.client.fallback.connect.timeout, and
   * starts its heartbeat.
   *
   * @throws FaroException CONNECTION_FAILED (or the masters' error) when it cannot register
   */
  AppSession(
      AppId app,
      AppProfile profile,
      ClientSettings settings,
      MasterClient master,
      Runnable onBeat) {
    this.app = requireNonNull(app, "app is null");
    this.master = requireNonNull(master, "master is null");
    this.onBeat = requireNonNull(onBeat, "onBeat is null");
    byte[] token = AppSecrets.token();
    // Each field as long as the masters take (a longer one would fail the registration).
    this.profile =
        new AppProfile(bounded(profile.user()), bounded(profile.queue()), bounded(profile.name()));
    try {
      // Empty from a cluster without authentication (or one older than it).
      Optional<DriverProto.Registration> answer =
          DriverProto.registerApp(
              master, app, token, this.profile, settings.fallbackConnectTimeout());
      this.credentials = credentialsOf(app, token, answer);
    } catch (FaroException e) {
      if (e.code() == ErrorCode.ADMISSION_REFUSED) {
        throw e; // the masters answered: the message says why, naming the rule
      }
      throw new FaroException(
          e.code(),
          "Cannot register application "
              + app
              + " with the Faro cluster at "
              + settings.masters()
              + " (faro.master.endpoints, spark.faro.master.endpoints in Spark) within "
              + settings.fallbackConnectTimeout().toMillis()
              + " ms (faro.client.fallback.connect.timeout): "
              + e.getMessage(),
          e);
    }
    this.heartbeat =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "faro-app-heartbeat");
              t.setDaemon(true);
              return t;
            });
    long period = settings.appHeartbeatInterval().toMillis();
    heartbeat.scheduleWithFixedDelay(this::beat, period, period, TimeUnit.MILLISECONDS);
  }

  /**
   * What this app proves to the cluster from now on: its registration's identity and secret when
   * the masters authenticate applications, else nothing.
   */
  Optional<AuthOptions.Credentials> credentials() {
    return credentials;
  }

  private static Optional<AuthOptions.Credentials> credentialsOf(
      AppId app, byte[] token, Optional<DriverProto.Registration> answer) {
    if (answer.isEmpty()) {
      return Optional.empty();
    }
    String nonce = answer.get().nonce();
    if (!nonce.equals(AppSecrets.nonce(token))) {
      throw new FaroException(
          ErrorCode.UNAUTHENTICATED,
          "the master answered app " + app + "'s registration with another registration's nonce");
    }
    return Optional.of(
        AuthOptions.Credentials.app(
            Identity.app(app, nonce), Secret.ofBytes(answer.get().secret())));
  }

  /** Whether the app's last heartbeat reached some master. */
  boolean mastersReachable() {
    return mastersReachable;
  }

  /** Heartbeats every master: each keeps the time, so a new leader knows the app is alive. */
  private void beat() {
    try {
      onBeat.run();
    } catch (RuntimeException e) {
      // A thrown exception would end the heartbeat's schedule.
      LOG.warn("A periodic check of app {} failed", app, e);
    }
    List<CompletableFuture<?>> answers = DriverProto.heartbeat(master, app, profile);
    CompletableFuture.allOf(
            answers.stream()
                .map(a -> a.handle((r, e) -> e == null))
                .toArray(CompletableFuture[]::new))
        .thenRun(
            () -> {
              boolean none = answers.stream().allMatch(CompletableFuture::isCompletedExceptionally);
              mastersReachable = !none;
              if (none) {
                LOG.warn(
                    "App heartbeat for {} reached no master: {}",
                    app,
                    Futures.unwrap(answers.get(0).handle((r, e) -> e).join()).toString());
              }
            });
  }

  /** Stops the heartbeat and unregisters the app; the masters expire it if that fails. */
  @Override
  public void close() {
    heartbeat.shutdownNow();
    try {
      Futures.await(
          DriverProto.unregisterApp(master, app),
          Duration.ofSeconds(10),
          "unregistering app " + app);
    } catch (FaroException e) {
      LOG.warn("Could not unregister app {}; the master expires it: {}", app, e.getMessage());
    }
  }
}
