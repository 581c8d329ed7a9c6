package io.faro.common.network;

import io.faro.common.log.RateLimitedLog;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the connections of one peer address hold on one server, bounded per address: how many
 * connections are open (faro.network.max.connections.per.peer), and on a port without a memory
 * budget how many bytes of frames are still arriving (faro.network.max.partial.bytes.per.peer). An
 * address has an entry only while it holds something. Thread-safe: connections of one peer may be
 * on different event loops.
 */
final class PeerLimits {
  private final String serverName;
  private final RateLimitedLog<PeerWarning> warnings;
  private final ConcurrentHashMap<InetAddress, AtomicInteger> connectionsPerPeer =
      new ConcurrentHashMap<>();
  // On a port without a memory budget: bytes of frames still arriving, per peer address.
  private final ConcurrentHashMap<InetAddress, Long> partialBytesPerPeer =
      new ConcurrentHashMap<>();

  PeerLimits(String serverName, RateLimitedLog<PeerWarning> warnings) {
    this.serverName = serverName;
    this.warnings = warnings;
  }

  /**
   * Counts {@code ch} against its peer address, or closes it when that peer already has {@code max}
   * connections here (a client that opens connections in a loop must not exhaust the process's file
   * descriptors and buffers).
   */
  boolean admit(SocketChannel ch, int max) {
    InetAddress peer = ch.remoteAddress() == null ? null : ch.remoteAddress().getAddress();
    if (peer == null) {
      return true;
    }
    AtomicInteger count = connectionsPerPeer.computeIfAbsent(peer, p -> new AtomicInteger());
    if (count.incrementAndGet() > max) {
      count.decrementAndGet();
      warnings.warn(
          PeerWarning.CONNECTION_LIMITED,
          "{}: refusing a connection from {}: it has {} already "
              + "(faro.network.max.connections.per.peer)",
          serverName,
          peer,
          max);
      ch.close();
      return false;
    }
    ch.closeFuture()
        .addListener(
            f -> {
              if (count.decrementAndGet() == 0) {
                connectionsPerPeer.remove(peer, count);
              }
            });
    return true;
  }

  /**
   * Counts the bytes of frames still arriving on {@code ch} against its peer address's share of
   * {@code max} (faro.network.max.partial.bytes.per.peer), on a port without a memory budget: the
   * connection whose bytes take its peer over it is closed, with the reason.
   */
  FrameDecoder.PartialFrames peerBytes(SocketChannel ch, long max) {
    InetAddress peer = ch.remoteAddress() == null ? null : ch.remoteAddress().getAddress();
    if (peer == null) {
      return null;
    }
    return delta -> {
      // Atomic per peer, and an entry only while some of its bytes are held.
      Long held =
          partialBytesPerPeer.compute(
              peer,
              (p, before) -> {
                long after = (before == null ? 0 : before) + delta;
                return after <= 0 ? null : after;
              });
      long now = held == null ? 0 : held;
      if (delta > 0 && now > max) {
        throw new TooLongFrameException(
            "the connections from "
                + peer.getHostAddress()
                + " hold "
                + now
                + " bytes of frames still arriving, more than "
                + max
                + " (faro.network.max.partial.bytes.per.peer)");
      }
    };
  }
}
