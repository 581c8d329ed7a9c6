package io.faro.common.master;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.network.ClientPool;
import io.faro.common.network.Futures;
import io.faro.common.network.HostPort;
import io.faro.common.network.RemoteException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls the master group: sends to the master believed to lead, follows a "not leader, try X"
 * answer, moves on to the next master when one cannot be reached, and retries with bounded backoff
 * until {@code faro.master.client.retry.timeout} runs out. Non-retryable errors fail at once.
 * Thread-safe; never blocks the caller's thread.
 */
public final class MasterClient {
  private static final Logger LOG = LoggerFactory.getLogger(MasterClient.class);
  private static final long MAX_BACKOFF_MS = 2000;

  private final ClientPool pool;
  private final List<HostPort> endpoints;
  private final Duration retryTimeout;
  private final Duration attemptTimeout;
  private final AtomicInteger leaderGuess = new AtomicInteger();

  /** With the default per-master attempt timeout (faro.master.client.attempt.timeout). */
  public MasterClient(ClientPool pool, List<HostPort> endpoints, Duration retryTimeout) {
    this(
        pool,
        endpoints,
        retryTimeout,
        MasterOptions.ATTEMPT_TIMEOUT.parse(MasterOptions.ATTEMPT_TIMEOUT.defaultText()));
  }

  /**
   * @param retryTimeout how long a call keeps trying, across masters and elections
   * @param attemptTimeout how long one master has to answer before the next one is tried
   */
  public MasterClient(
      ClientPool pool, List<HostPort> endpoints, Duration retryTimeout, Duration attemptTimeout) {
    this.pool = requireNonNull(pool, "pool is null");
    this.endpoints = List.copyOf(endpoints);
    this.retryTimeout = requireNonNull(retryTimeout, "retryTimeout is null");
    this.attemptTimeout = requireNonNull(attemptTimeout, "attemptTimeout is null");
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("no master endpoints (faro.master.endpoints)");
    }
  }

  public List<HostPort> endpoints() {
    return endpoints;
  }

  /** How long {@link #call(Message, Class)} keeps trying (faro.master.client.retry.timeout). */
  public Duration retryTimeout() {
    return retryTimeout;
  }

  public <R extends Message> CompletableFuture<R> call(Message request, Class<R> responseType) {
    return call(request, responseType, retryTimeout);
  }

  /** As {@link #call(Message, Class)}, trying for {@code retryFor} instead of the retry timeout. */
  public <R extends Message> CompletableFuture<R> call(
      Message request, Class<R> responseType, Duration retryFor) {
    CompletableFuture<R> result = new CompletableFuture<>();
    attempt(
        request,
        responseType,
        System.nanoTime() + retryFor.toNanos(),
        0,
        result,
        new ConcurrentHashMap<>());
    return result;
  }

  /**
   * Sends {@code request} once to every master, in {@link #endpoints()} order, without retries or
   * redirects: for heartbeats, which every master keeps so that a new leader has fresh ones.
   */
  public <R extends Message> List<CompletableFuture<R>> callEach(
      Message request, Class<R> responseType) {
    return endpoints.stream()
        .map(endpoint -> pool.call(endpoint, request, responseType, attemptTimeout))
        .toList();
  }

  /** Blocking form, for threads that may wait. */
  public <R extends Message> R callBlocking(Message request, Class<R> responseType) {
    return callBlocking(request, responseType, retryTimeout);
  }

  /** Blocking form of {@link #call(Message, Class, Duration)}. */
  public <R extends Message> R callBlocking(
      Message request, Class<R> responseType, Duration retryFor) {
    return Futures.await(
        call(request, responseType, retryFor),
        retryFor.plusSeconds(5),
        request.getClass().getSimpleName() + " to masters " + endpoints);
  }

  /**
   * @param lastErrors the last failure of each master tried, for the final error message
   */
  private <R extends Message> void attempt(
      Message request,
      Class<R> responseType,
      long deadline,
      int tries,
      CompletableFuture<R> result,
      Map<HostPort, String> lastErrors) {
    int guess = leaderGuess.get();
    int index = Math.floorMod(guess, endpoints.size());
    HostPort target = endpoints.get(index);
    pool.call(target, request, responseType, attemptTimeout)
        .whenComplete(
            (response, error) -> {
              if (error == null) {
                result.complete(response);
                return;
              }
              Throwable cause = Futures.unwrap(error);
              boolean retryable = !(cause instanceof FaroException fe) || fe.retryable();
              if (!retryable) {
                result.completeExceptionally(cause);
                return;
              }
              lastErrors.put(
                  target,
                  cause.getMessage()
                      + (cause instanceof RemoteException re && !re.leaderHint().isEmpty()
                          ? " [leader hint " + re.leaderHint() + "]"
                          : ""));
              moveOn(guess, index, cause);
              long now = System.nanoTime();
              if (now >= deadline) {
                result.completeExceptionally(
                    new FaroException(
                        cause instanceof FaroException fe ? fe.code() : ErrorCode.CONNECTION_FAILED,
                        "no master of "
                            + endpoints
                            + " answered "
                            + request.getClass().getSimpleName()
                            + " within "
                            + retryTimeout.toMillis()
                            + "ms (faro.master.client.retry.timeout) after "
                            + (tries + 1)
                            + " attempts; last error of each master: "
                            + lastErrors,
                        cause));
                return;
              }
              // Try the next master at once; back off only once every master has been tried.
              long backoff =
                  (tries + 1) % endpoints.size() == 0
                      ? Math.min(MAX_BACKOFF_MS, 100L << Math.min(5, tries / endpoints.size()))
                      : 0;
              if (tries % endpoints.size() == 0) {
                LOG.debug(
                    "Master call {} to {} failed, retrying: {}",
                    request.getClass().getSimpleName(),
                    target,
                    cause.toString());
              }
              Executor later = CompletableFuture.delayedExecutor(backoff, TimeUnit.MILLISECONDS);
              later.execute(
                  () -> attempt(request, responseType, deadline, tries + 1, result, lastErrors));
            });
  }

  /**
   * After master {@code failedIndex} (tried as {@code guess}) failed: follow its leader hint, or
   * try the next master. Only the first of concurrent failures of one guess moves it on.
   */
  private void moveOn(int guess, int failedIndex, Throwable cause) {
    if (cause instanceof RemoteException re && !re.leaderHint().isEmpty()) {
      HostPort hint = HostPort.parse(re.leaderHint());
      int hinted = endpoints.indexOf(hint);
      if (hinted >= 0) {
        leaderGuess.set(hinted);
        return;
      }
    }
    leaderGuess.compareAndSet(guess, (failedIndex + 1) % endpoints.size());
  }
}
