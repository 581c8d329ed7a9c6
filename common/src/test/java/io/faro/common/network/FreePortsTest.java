package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortsTest {
  @Test
  void portsAreDistinctBindableAndBelowTheEphemeralRange() throws Exception {
    int[] first = FreePorts.loopback(6);
    int[] second = FreePorts.loopback(6);
    Set<Integer> all = new HashSet<>();
    for (int[] ports : new int[][] {first, second}) {
      for (int port : ports) {
        assertThat(all.add(port)).as("port %d picked twice", port).isTrue();
        if (FreePorts.ephemeralLow() - FreePorts.LOWEST >= 1_000) {
          // The kernel hands out no port below its ephemeral range to outgoing connections.
          assertThat(port).isBetween(FreePorts.LOWEST, FreePorts.ephemeralLow() - 1);
        }
        try (ServerSocket socket = new ServerSocket()) {
          socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
          assertThat(socket.getLocalPort()).isEqualTo(port);
        }
      }
    }
  }
}
