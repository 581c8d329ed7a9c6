package io.faro.master.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.common.config.FaroConf;
import io.faro.master.MasterCommand;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** A master whose port is taken says which port and which key, not something about its storage. */
class MasterPortInUseTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"faro.master.port", "faro.master.raft.port", "faro.master.http.port"})
  void aTakenPortIsNamedWithItsKey(String key) throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      FaroConf conf = MasterFixture.conf(dir).with(key, Integer.toString(port));
      MasterServer master = new MasterServer(conf);
      try {
        assertThatThrownBy(master::start)
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("port " + port + " is in use")
            .hasMessageContaining("set " + key)
            .hasMessageNotContaining(MasterServerOptions.RATIS_DIR.key());
      } finally {
        master.close();
      }
    }
  }

  @Test
  void theMasterCommandExitsWithTheMessage() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      StringWriter err = new StringWriter();
      CommandLine line = new CommandLine(new MasterCommand()).setErr(new PrintWriter(err, true));
      int exit =
          line.execute(
              "--set", "faro.auth.enabled=false",
              "--set", "faro.master.host=127.0.0.1",
              "--set", "faro.master.port=" + port,
              "--set", "faro.master.raft.port=0",
              "--set", "faro.master.http.port=-1",
              "--set", "faro.master.ratis.dir=" + dir.resolve("ratis"));

      assertThat(exit).isEqualTo(1);
      assertThat(err.toString())
          .contains("faro master: cannot start:")
          .contains("127.0.0.1:" + port)
          .contains("set faro.master.port to a free port");
    }
  }
}
