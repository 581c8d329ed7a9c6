package io.faro.common.network;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Free TCP ports, for processes that must know each other's ports before any of them binds (a Raft
 * group's peers) and for tests. The ports are closed again when returned: another process may take
 * one in the short window before its user binds it.
 */
public final class FreePorts {
  private FreePorts() {}

  /** {@code count} distinct ports free on {@code host}: all held open until all are chosen. */
  public static int[] pick(String host, int count) throws IOException {
    InetAddress address = InetAddress.getByName(host);
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        sockets.add(new ServerSocket(0, 1, address));
      }
      return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
    } finally {
      for (ServerSocket socket : sockets) {
        socket.close();
      }
    }
  }

  /** {@code count} distinct ports free on loopback. */
  public static int[] loopback(int count) throws IOException {
    return pick(InetAddress.getLoopbackAddress().getHostAddress(), count);
  }
}
