package io.faro.common.network;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Locale;
import java.util.Optional;

/**
 * Turns a failure to listen on a port into a message an operator can act on: what could not listen,
 * on which address, why, and which config key sets the port. Without it, a port taken by another
 * process surfaces as a bare "Address already in use" (no port), or worse, as the failure of
 * whatever started next.
 */
public final class BindFailures {
  private BindFailures() {}

  /**
   * Fails with {@link #message} when {@code host:port} cannot be listened on now; for a library
   * that binds its own port and handles the failure badly (Ratis's gRPC server exits the JVM). The
   * port is released at once: another process may still take it before the library binds.
   *
   * @throws IllegalStateException naming the port and {@code portKey}
   */
  public static void requireFree(String what, String host, int port, String portKey) {
    if (port == 0) {
      return;
    }
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(host, port), 1);
    } catch (BindException e) {
      throw new IllegalStateException(message(what, host, port, portKey, e), e);
    } catch (IOException e) {
      throw new IllegalStateException(
          what + " cannot listen on " + host + ":" + port + " (" + portKey + "): " + e, e);
    }
  }

  /** The {@link BindException} in {@code error}'s cause chain, if there is one. */
  public static Optional<BindException> find(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof BindException bind) {
        return Optional.of(bind);
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return Optional.empty();
  }

  /**
   * @param what the server that could not listen, e.g. "faro-worker-push"
   * @param portKey the config key that sets {@code port}
   */
  public static String message(
      String what, String host, int port, String portKey, BindException error) {
    String address = host + ":" + port;
    String reason = error.getMessage() == null ? "" : error.getMessage();
    if (reason.toLowerCase(Locale.ROOT).contains("in use")) {
      return what
          + " cannot listen on "
          + address
          + ": port "
          + port
          + " is in use (another process, "
          + "or another Faro server on this machine, holds it); set "
          + portKey
          + " to a free port "
          + "(an integer in [0, 65535]; 0 picks any free port)";
    }
    return what
        + " cannot listen on "
        + address
        + " ("
        + reason
        + "): check that "
        + host
        + " is an address of this machine and that port "
        + port
        + " ("
        + portKey
        + ") may be used"
        + (port > 0 && port < 1024 ? " (ports below 1024 need root)" : "");
  }
}
