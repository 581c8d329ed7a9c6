package io.faro.common.network;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waiting on futures with a bound, turning failures into {@link FaroException}s. */
public final class Futures {
  private Futures() {}

  /**
   * Whether {@code error} comes from a connection that was refused: nothing listens at the peer's
   * address (its process is down). A connect that timed out is not: a busy peer may still answer.
   */
  public static boolean connectionRefused(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      // Netty's ConnectTimeoutException is a ConnectException too; its name survives shading.
      if (t instanceof ConnectException
          && !t.getClass().getSimpleName().equals("ConnectTimeoutException")) {
        return true;
      }
    }
    return false;
  }

  public static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  /** Waits at most {@code timeout}; what = what was awaited, for the error message. */
  public static <T> T await(CompletableFuture<T> future, Duration timeout, String what) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      future.cancel(false);
      throw new FaroException(ErrorCode.INTERNAL, "interrupted while waiting for " + what, e);
    } catch (TimeoutException e) {
      future.cancel(false);
      throw new FaroException(
          ErrorCode.TIMEOUT, "no answer within " + timeout.toMillis() + "ms for " + what);
    } catch (CancellationException e) {
      throw new FaroException(ErrorCode.INTERNAL, "cancelled: " + what, e);
    } catch (ExecutionException e) {
      Throwable cause = unwrap(e);
      if (cause instanceof FaroException fe) {
        throw new FaroException(fe.code(), what + ": " + fe.getMessage(), fe);
      }
      throw new FaroException(ErrorCode.INTERNAL, what + " failed: " + cause, cause);
    }
  }
}
