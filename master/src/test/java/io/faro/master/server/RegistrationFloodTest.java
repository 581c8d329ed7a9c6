package io.faro.master.server;

import static io.faro.master.testing.Requests.registerApp;
import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.error.ErrorCode;
import io.faro.common.network.RemoteException;
import io.faro.master.MasterServerOptions;
import io.faro.master.testing.MasterFixture;
import io.faro.proto.AppProfileP;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MessageType;
import io.faro.proto.RegisterAppRequest;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One host that registers applications in a loop is refused past faro.master.max.apps.per.host,
 * naming the key and the host, and cannot shut others out: an application from another host (here
 * 127.0.0.2) still registers. A user is bounded likewise, by faro.master.max.apps.per.user. The
 * host is the one the master's connection sees, whatever the driver says.
 */
class RegistrationFloodTest {
  @TempDir Path dir;

  /** Sends a registration from {@code from} on a raw socket; null when answered OK, else why. */
  private static ErrorResponse registerFrom(
      InetAddress from, int port, String app, AppProfileP profile) throws IOException {
    byte[] meta =
        RegisterAppRequest.newBuilder().setAppId(app).setProfile(profile).build().toByteArray();
    try (Socket socket = new Socket()) {
      socket.bind(new InetSocketAddress(from, 0));
      socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              ByteBuffer.allocate(19 + meta.length)
                  .putInt(15 + meta.length)
                  .put((byte) 1)
                  .putShort((short) MessageType.REGISTER_APP_REQUEST_VALUE)
                  .putLong(1)
                  .putInt(meta.length)
                  .put(meta)
                  .array());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      int length = in.readInt();
      int kind = in.readByte();
      in.readShort();
      in.readLong();
      byte[] answer = new byte[in.readInt()];
      in.readFully(answer);
      in.skipNBytes(length - 15 - answer.length);
      return kind == 3 ? ErrorResponse.parseFrom(answer) : null;
    }
  }

  @Test
  void aHostOrAUserThatRegistersManyAppsIsRefusedPastItsBoundAndOthersStillRegister()
      throws Exception {
    try (MasterFixture master =
        MasterFixture.start(
            MasterFixture.conf(dir)
                .with(MasterServerOptions.MAX_APPS_PER_HOST, "5")
                .with(MasterServerOptions.MAX_APPS_PER_USER, "7"))) {
      int port = master.endpoint().port();
      InetAddress flooder = InetAddress.getByName("127.0.0.1");
      // The host it claims to be is overwritten by the one the master sees.
      AppProfileP lying = AppProfileP.newBuilder().setUser("u1").setHost("10.9.9.9").build();
      for (int i = 0; i < 5; i++) {
        assertThat(registerFrom(flooder, port, "flood-" + i, lying)).as("app %d", i).isNull();
      }
      ErrorResponse refused = registerFrom(flooder, port, "flood-5", lying);
      assertThat(refused).isNotNull();
      assertThat(ErrorCode.fromProto(refused.getCode())).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
      assertThat(refused.getMessage())
          .contains("host 127.0.0.1 has registered 5 apps")
          .contains("faro.master.max.apps.per.host");
      // A registration again of an app it holds is not a new one.
      assertThat(registerFrom(flooder, port, "flood-0", lying)).isNull();

      // Another host still registers, and so does its user up to that user's bound.
      InetAddress other = InetAddress.getByName("127.0.0.2");
      AppProfileP sameUser = AppProfileP.newBuilder().setUser("u1").build();
      assertThat(registerFrom(other, port, "real-1", sameUser)).isNull();
      assertThat(registerFrom(other, port, "real-2", sameUser)).isNull();
      ErrorResponse user = registerFrom(other, port, "real-3", sameUser);
      assertThat(user).isNotNull();
      assertThat(user.getMessage())
          .contains("user u1 runs 7 registered apps")
          .contains("faro.master.max.apps.per.user");
      assertThat(
              registerFrom(other, port, "real-3", AppProfileP.newBuilder().setUser("u2").build()))
          .isNull();
      // A registration from this JVM's own client (127.0.0.1) is the flooder's host: refused too.
      RemoteException fromHere = master.callFails(registerApp("here"));
      assertThat(fromHere.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
    }
  }
}
