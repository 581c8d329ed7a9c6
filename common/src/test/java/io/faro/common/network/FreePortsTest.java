package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortsTest {
  private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  @Test
  void readsTheKernelsEphemeralRange() throws Exception {
    assumeTrue(Files.isReadable(RANGE), "a Linux kernel's ephemeral port range");
    int low = Integer.parseInt(Files.readAllLines(RANGE).get(0).trim().split("\\s+")[0]);
    assertThat(FreePorts.ephemeralLow()).isEqualTo(low);
  }

  @Test
  void portsAreDistinctBindableAndBelowTheEphemeralRange() throws Exception {
    int low = FreePorts.ephemeralLow();
    // Where the kernel leaves room below its range (it does by default: 32768 and up).
    assumeTrue(low - FreePorts.LOWEST >= 1_000, "room below the ephemeral range");
    Set<Integer> all = new HashSet<>();
    for (String host : new String[] {"127.0.0.1", "0.0.0.0", "127.0.0.1"}) {
      for (int port : FreePorts.pick(host, 4)) {
        assertThat(all.add(port)).as("port %d picked twice", port).isTrue();
        // The kernel hands out no port below its ephemeral range to outgoing connections.
        assertThat(port).isBetween(FreePorts.LOWEST, low - 1);
        try (ServerSocket socket = new ServerSocket()) {
          socket.bind(new InetSocketAddress(InetAddress.getByName(host), port));
          assertThat(socket.getLocalPort()).isEqualTo(port);
        }
      }
    }
  }
}
