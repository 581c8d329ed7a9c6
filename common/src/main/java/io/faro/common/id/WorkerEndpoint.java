package io.faro.common.id;

import static java.util.Objects.requireNonNull;

import java.net.InetSocketAddress;

/** Where a worker listens: control RPCs, pushes and fetches each have their own port. */
public record WorkerEndpoint(String host, int rpcPort, int pushPort, int fetchPort) {
  public WorkerEndpoint {
    requireNonNull(host, "host is null");
  }

  public InetSocketAddress rpcAddress() {
    return InetSocketAddress.createUnresolved(host, rpcPort);
  }

  public InetSocketAddress pushAddress() {
    return InetSocketAddress.createUnresolved(host, pushPort);
  }

  public InetSocketAddress fetchAddress() {
    return InetSocketAddress.createUnresolved(host, fetchPort);
  }
}
