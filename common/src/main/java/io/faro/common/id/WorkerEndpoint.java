package io.faro.common.id;

import static java.util.Objects.requireNonNull;

import io.faro.common.network.HostPort;
import java.net.InetSocketAddress;

/** Where a worker listens: control RPCs, pushes and fetches each have their own port. */
public record WorkerEndpoint(String host, int rpcPort, int pushPort, int fetchPort) {
  public WorkerEndpoint {
    requireNonNull(host, "host is null");
  }

  /** The RPC port's address: reservations, commits, status. */
  public HostPort rpc() {
    return new HostPort(host, rpcPort);
  }

  /** The push port's address: pushes from clients, forwards from primaries. */
  public HostPort push() {
    return new HostPort(host, pushPort);
  }

  /** The fetch port's address: reducers' reads of committed partitions. */
  public HostPort fetch() {
    return new HostPort(host, fetchPort);
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
