package io.faro.master.raft;

import static java.util.Objects.requireNonNull;

import io.faro.common.network.HostPort;
import java.util.Optional;

/**
 * One master of the Raft group, as written in {@code faro.master.raft.peers}: {@code
 * id@host:raftPort} or {@code id@host:raftPort/rpcPort}.
 *
 * <p>The Raft address is where the other masters replicate the log to. The RPC port is only used to
 * tell clients where the leader is ("not leader, try host:rpcPort"); when it is left out, every
 * master is assumed to serve RPCs on the same {@code faro.master.port}, which is the usual layout
 * of one master per host.
 *
 * @param rpcPort the peer's RPC port, or 0 when the peer uses this node's {@code faro.master.port}
 */
public record RaftPeerSpec(String id, HostPort raftAddress, int rpcPort) {
  public RaftPeerSpec {
    requireNonNull(id, "id is null");
    requireNonNull(raftAddress, "raftAddress is null");
    if (id.isBlank() || id.contains("@") || id.contains(",")) {
      throw new IllegalArgumentException("bad master id '" + id + "'");
    }
    if (rpcPort < 0 || rpcPort > 65535) {
      throw new IllegalArgumentException("bad RPC port " + rpcPort + " for master " + id);
    }
  }

  /** Parses {@code id@host:raftPort[/rpcPort]}; the error names the text and the expected form. */
  public static RaftPeerSpec parse(String text) {
    int at = text.indexOf('@');
    if (at <= 0) {
      throw new IllegalArgumentException("expected id@host:raftPort[/rpcPort], got '" + text + "'");
    }
    String id = text.substring(0, at).trim();
    String address = text.substring(at + 1).trim();
    int rpcPort = 0;
    int slash = address.indexOf('/');
    if (slash >= 0) {
      try {
        rpcPort = Integer.parseInt(address.substring(slash + 1).trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "expected id@host:raftPort[/rpcPort], got '" + text + "'");
      }
      address = address.substring(0, slash);
    }
    return new RaftPeerSpec(id, HostPort.parse(address), rpcPort);
  }

  /** Where this peer serves Faro RPCs, if known; {@code defaultRpcPort} 0 means unknown. */
  public Optional<HostPort> rpcAddress(int defaultRpcPort) {
    int port = rpcPort != 0 ? rpcPort : defaultRpcPort;
    return port == 0 ? Optional.empty() : Optional.of(new HostPort(raftAddress.host(), port));
  }

  @Override
  public String toString() {
    return id + "@" + raftAddress + (rpcPort == 0 ? "" : "/" + rpcPort);
  }
}
