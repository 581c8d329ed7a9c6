package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.log.RateLimitedLog;
import io.faro.proto.EmptyResponse;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/** A peer that sends garbage over and over gets a few warnings logged, and the rest counted. */
class TransportServerWarningsTest {
  @Test
  void aScannerSendingBadFramesIsLoggedAFewTimesAndCounted() throws IOException {
    NetworkSettings network =
        NetworkSettings.from(
            FaroConf.empty()
                .with(NetworkOptions.IO_THREADS, "1")
                .with("faro.auth.enabled", "false"));
    try (TransportServer server =
        new TransportServer(
            "test-server",
            "127.0.0.1",
            0,
            "faro.test.port",
            network,
            (request, responder) -> responder.respond(EmptyResponse.getDefaultInstance()),
            null)) {
      int connections = 60;
      for (int i = 0; i < connections; i++) {
        try (Socket socket = new Socket()) {
          socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
          socket.setSoTimeout(10_000);
          // A frame length below the header size: corrupt at once.
          new DataOutputStream(socket.getOutputStream()).writeInt(1);
          InputStream in = socket.getInputStream();
          // The server logs (or counts) before it closes: wait for the close.
          assertThat(in.read()).as("the server closes connection %d", i).isEqualTo(-1);
        }
      }

      // 60 connections take well under a second: one 10 s window, two on a very slow machine.
      assertThat(server.suppressedWarnings())
          .isBetween(
              (long) connections - 2 * RateLimitedLog.DEFAULT_LINES,
              (long) connections - RateLimitedLog.DEFAULT_LINES);
    }
  }
}
