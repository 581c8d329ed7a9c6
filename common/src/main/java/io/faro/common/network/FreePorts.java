package io.faro.common.network;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports, for processes that must know each other's ports before any of them binds (a Raft
 * group's peers) and for tests.
 *
 * <p>The ports are closed again when returned, and their user binds them later. A port from the
 * kernel's ephemeral range (what binding port 0 gives) can meanwhile become the local port of any
 * outgoing connection on the machine, and the server meant to listen there fails to start (seen in
 * CI: "port 43545 is in use"). So ports are picked below that range (Linux:
 * /proc/sys/net/ipv4/ip_local_port_range, 32768 and up by default), where the kernel hands out no
 * port by itself, and a port picked in this process is not picked again for a while. Where no such
 * room exists, the kernel picks.
 */
public final class FreePorts {
  /** Lowest port picked: above the well-known and most registered service ports. */
  static final int LOWEST = 20_000;

  private static final int TRIES = 2_000;
  private static final long REUSE_AFTER_NANOS = 10L * 60 * 1_000_000_000L;
  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  /** Ports picked in this process, with when: not picked again within REUSE_AFTER_NANOS. */
  private static final Map<Integer, Long> PICKED = new LinkedHashMap<>();

  private FreePorts() {}

  /** {@code count} distinct ports free on {@code host}: all held open until all are chosen. */
  public static int[] pick(String host, int count) throws IOException {
    InetAddress address = InetAddress.getByName(host);
    int below = ephemeralLow();
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      synchronized (PICKED) {
        forgetOld(System.nanoTime());
        for (int i = 0; i < count; i++) {
          ServerSocket socket = below - LOWEST >= 1_000 ? bindBelow(address, below) : null;
          sockets.add(socket != null ? socket : bindAny(address));
        }
        long now = System.nanoTime();
        for (ServerSocket socket : sockets) {
          PICKED.put(socket.getLocalPort(), now);
        }
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

  /** A socket bound to a random free port in [LOWEST, below) not picked lately, or null. */
  private static ServerSocket bindBelow(InetAddress address, int below) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int tries = 0; tries < TRIES; tries++) {
      int port = LOWEST + random.nextInt(below - LOWEST);
      if (PICKED.containsKey(port)) {
        continue;
      }
      ServerSocket socket = null;
      try {
        socket = new ServerSocket();
        socket.bind(new InetSocketAddress(address, port), 1);
        return socket;
      } catch (IOException inUse) {
        closeQuietly(socket);
      }
    }
    return null;
  }

  /**
   * A socket bound to a port the kernel picks, not one picked lately if it can help it: a port
   * closed a moment ago may be the kernel's next pick.
   */
  private static ServerSocket bindAny(InetAddress address) throws IOException {
    List<ServerSocket> refused = new ArrayList<>();
    try {
      for (int tries = 0; ; tries++) {
        ServerSocket socket = new ServerSocket(0, 1, address);
        if (!PICKED.containsKey(socket.getLocalPort()) || tries >= 100) {
          return socket;
        }
        refused.add(socket); // held, so that the kernel picks another
      }
    } finally {
      refused.forEach(FreePorts::closeQuietly);
    }
  }

  /**
   * The lowest port of the kernel's ephemeral range; 32768 where it cannot be read. Read line by
   * line: a /proc file says its size is 0, and Files.readAllBytes then returns only its first byte
   * (seen on Java 17: "3" for "32768 60999").
   */
  static int ephemeralLow() {
    try (BufferedReader in = Files.newBufferedReader(EPHEMERAL_RANGE, StandardCharsets.US_ASCII)) {
      String line = in.readLine();
      return Integer.parseInt(line.trim().split("\\s+")[0]);
    } catch (IOException | RuntimeException unreadable) {
      return 32_768;
    }
  }

  private static void forgetOld(long now) {
    PICKED.values().removeIf(at -> now - at > REUSE_AFTER_NANOS);
  }

  private static void closeQuietly(ServerSocket socket) {
    if (socket == null) {
      return;
    }
    try {
      socket.close();
    } catch (IOException ignored) {
      // nothing bound
    }
  }
}
