package io.faro.common.network;

import static java.util.Objects.requireNonNull;

import java.net.InetSocketAddress;

/** A remote address as configured: host name (never resolved here) and port. */
public record HostPort(String host, int port) {
  public HostPort {
    requireNonNull(host, "host is null");
    if (host.isBlank() || port < 0 || port > 65535) {
      throw new IllegalArgumentException("bad address " + host + ":" + port);
    }
  }

  /** Parses {@code host:port}; the error names the text. */
  public static HostPort parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("expected host:port, got '" + text + "'");
    }
    try {
      return new HostPort(
          text.substring(0, colon).trim(), Integer.parseInt(text.substring(colon + 1).trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("expected host:port, got '" + text + "'");
    }
  }

  public InetSocketAddress toSocketAddress() {
    return new InetSocketAddress(host, port);
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
