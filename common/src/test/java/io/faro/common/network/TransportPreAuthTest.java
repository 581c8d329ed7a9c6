package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.faro.common.auth.AuthSettings;
import io.faro.common.auth.Handshake;
import io.faro.common.auth.Secret;
import io.faro.common.config.FaroConf;
import io.faro.common.error.ErrorCode;
import io.faro.proto.AuthStartRequest;
import io.faro.proto.EmptyResponse;
import io.faro.proto.ErrorCodeP;
import io.faro.proto.ErrorResponse;
import io.faro.proto.MasterStatusRequest;
import io.faro.proto.MessageType;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.ShuffleKeyP;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Before a connection proved who it is, a server with authentication on parses only the handshake
 * and what it serves to anyone, in small frames: anything else is answered and closed on its
 * header, nothing of it buffered or charged; a connection that proves nothing in time closes. After
 * the proof (or with authentication off), a meta is refused before parsing when it holds more
 * objects than its type may. Real servers on loopback, raw sockets as the peer.
 */
class TransportPreAuthTest {
  private static final Secret CLUSTER = Secret.of("cluster-secret-0123456789abcdef");

  private final AtomicInteger handled = new AtomicInteger();
  private final AtomicLong charged = new AtomicLong();
  private final AtomicLong mostCharged = new AtomicLong();

  private static NetworkSettings network(boolean auth, String... keyValues) {
    FaroConf conf = FaroConf.empty().with(NetworkOptions.IO_THREADS, "1");
    for (int i = 0; i < keyValues.length; i += 2) {
      conf = conf.with(keyValues[i], keyValues[i + 1]);
    }
    return NetworkSettings.from(conf)
        .withAuth(
            auth
                ? new AuthSettings(true, Optional.of(CLUSTER), Optional.empty())
                : AuthSettings.OFF);
  }

  /**
   * A push-like port (composite bodies, bytes of frames still arriving charged) that opens status.
   */
  private TransportServer server(NetworkSettings settings) {
    return new TransportServer(
        "preauth-test",
        "127.0.0.1",
        0,
        "faro.test.port",
        settings,
        new RequestHandler() {
          @Override
          public void handle(Request request, Responder responder) {
            handled.incrementAndGet();
            responder.respond(EmptyResponse.getDefaultInstance());
          }

          @Override
          public Set<MessageType> openToAnyone() {
            return Set.of(MessageType.MASTER_STATUS_REQUEST);
          }
        },
        null,
        FrameDecoder.Bodies.COMPOSITE,
        delta -> mostCharged.accumulateAndGet(charged.addAndGet(delta), Math::max),
        RequestObserver.NONE);
  }

  private static Socket connect(TransportServer server) throws IOException {
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
    socket.setSoTimeout(10_000);
    return socket;
  }

  /** The header of a request frame of {@code type} whose meta and body are {@code meta, body}. */
  private static byte[] header(MessageType type, long id, int metaLength, long bodyLength) {
    return ByteBuffer.allocate(FrameCodec.HEADER)
        .putInt((int) (FrameCodec.FIXED_AFTER_LENGTH + metaLength + bodyLength))
        .put((byte) 1)
        .putShort((short) type.getNumber())
        .putLong(id)
        .putInt(metaLength)
        .array();
  }

  private static void send(Socket socket, MessageType type, long id, Message meta, int body)
      throws IOException {
    byte[] m = meta.toByteArray();
    OutputStream out = socket.getOutputStream();
    out.write(header(type, id, m.length, body));
    out.write(m);
    out.write(new byte[body]);
    out.flush();
  }

  /** The next frame's kind and meta bytes, read from the raw socket. */
  private record Answer(int kind, long requestId, byte[] meta) {
    ErrorResponse error() throws IOException {
      assertThat(kind).as("an error answer").isEqualTo(3);
      return ErrorResponse.parseFrom(meta);
    }
  }

  private static Answer read(Socket socket) throws IOException {
    DataInputStream in = new DataInputStream(socket.getInputStream());
    int length = in.readInt();
    int kind = in.readByte();
    in.readShort();
    long id = in.readLong();
    byte[] meta = new byte[in.readInt()];
    in.readFully(meta);
    in.skipNBytes(length - FrameCodec.FIXED_AFTER_LENGTH - meta.length);
    return new Answer(kind, id, meta);
  }

  @Test
  void aStrangersPushOf120MiBIsAnsweredAndClosedOnItsHeaderWithNothingBufferedOrCharged()
      throws Exception {
    try (TransportServer server = server(network(true));
        Socket stranger = connect(server)) {
      // The header of a push frame of ~120 MiB of empty parts: refused on it. (The peer sends no
      // more, so that the server's close meets no unread bytes, which would reset the connection
      // before the answer is read.)
      stranger.getOutputStream().write(header(MessageType.PUSH_REQUEST, 7, 120 << 20, 0));

      Answer answer = read(stranger);
      assertThat(answer.requestId()).isEqualTo(7);
      ErrorResponse error = answer.error();
      assertThat(error.getCode()).isEqualTo(ErrorCodeP.UNAUTHENTICATED);
      assertThat(error.getMessage())
          .contains("takes PUSH_REQUEST only from a connection that proved who it is")
          .contains("faro.auth.enabled");
      assertThat(TransportServerLimitsTest.closedByServer(stranger)).isTrue();
      assertThat(handled.get()).isZero();
      assertThat(mostCharged.get())
          .as("an unproven connection's bytes are charged to no budget")
          .isZero();
    }
  }

  @Test
  void anOpenRequestOverTheUnauthenticatedFrameSizeIsRefusedAndASmallOneAnswered()
      throws Exception {
    try (TransportServer server =
            server(network(true, "faro.network.max.unauthenticated.frame.size", "4k"));
        Socket small = connect(server)) {
      send(
          small, MessageType.MASTER_STATUS_REQUEST, 1, MasterStatusRequest.getDefaultInstance(), 0);
      assertThat(read(small).kind()).as("answered").isEqualTo(2);
      small.setSoTimeout(1_000);
      assertThat(TransportServerLimitsTest.closedByServer(small)).as("and kept open").isFalse();
    }
    try (TransportServer server =
            server(network(true, "faro.network.max.unauthenticated.frame.size", "4k"));
        Socket large = connect(server)) {

      // Its header alone: refused on it (see above for why the peer sends no more).
      large.getOutputStream().write(header(MessageType.MASTER_STATUS_REQUEST, 2, 0, 5 * 1024));
      ErrorResponse error = read(large).error();
      assertThat(error.getCode()).isEqualTo(ErrorCodeP.LIMIT_EXCEEDED);
      assertThat(error.getMessage())
          .contains("at most 4096 bytes before a connection proved who it is")
          .contains("faro.network.max.unauthenticated.frame.size");
      assertThat(TransportServerLimitsTest.closedByServer(large)).isTrue();
      assertThat(handled.get()).as("the small one only").isEqualTo(1);
    }
  }

  @Test
  void aConnectionThatProvesNothingInTimeIsClosedUnlessItOnlyAskedWhatIsOpen() throws Exception {
    try (TransportServer server = server(network(true, "faro.network.handshake.timeout", "300ms"));
        Socket silent = connect(server);
        Socket halfHandshake = connect(server);
        Socket halfFrame = connect(server);
        Socket asker = connect(server)) {
      send(
          halfHandshake,
          MessageType.AUTH_START_REQUEST,
          1,
          AuthStartRequest.newBuilder()
              .setIdentity("cluster")
              .setTarget("")
              .setClientNonce(ByteString.copyFrom(Handshake.nonce()))
              .build(),
          0);
      assertThat(read(halfHandshake).kind()).as("the server's half").isEqualTo(2);
      send(
          asker, MessageType.MASTER_STATUS_REQUEST, 1, MasterStatusRequest.getDefaultInstance(), 0);
      assertThat(read(asker).kind()).isEqualTo(2);
      halfFrame.getOutputStream().write(new byte[] {0, 0, 1});

      for (Socket s : new Socket[] {silent, halfHandshake, halfFrame}) {
        s.setSoTimeout(5_000);
        assertThat(TransportServerLimitsTest.closedByServer(s)).isTrue();
      }
      asker.setSoTimeout(1_500);
      assertThat(TransportServerLimitsTest.closedByServer(asker))
          .as("a connection that asked what is open stays")
          .isFalse();
    }
  }

  /** A push meta of {@code parts} parts. */
  private static PushRequest push(int parts) {
    PushRequest.Builder b =
        PushRequest.newBuilder()
            .setShuffle(ShuffleKeyP.newBuilder().setAppId("app-1").setShuffleId(1));
    for (int i = 0; i < parts; i++) {
      b.addParts(PushPart.newBuilder().setPartitionId(i).setLength(1000));
    }
    return b.build();
  }

  @Test
  void aPushWithMorePartsThanItsBodyOrTheLimitHoldsIsRefusedBeforeParsing() throws Exception {
    // Authentication off: every connection counts as proven, and the meta caps still hold.
    try (TransportServer server = server(network(false, "faro.network.max.parts.per.push", "100"));
        Socket fits = connect(server);
        Socket emptyParts = connect(server);
        Socket emptyObjects = connect(server);
        Socket overLimit = connect(server)) {
      send(fits, MessageType.PUSH_REQUEST, 1, push(100), 100 * batchHeader());
      assertThat(read(fits).kind()).isEqualTo(2);

      // The header of 120 MiB of empty parts and no body: refused on it, nothing buffered.
      emptyParts.getOutputStream().write(header(MessageType.PUSH_REQUEST, 2, 120 << 20, 0));
      ErrorResponse error = read(emptyParts).error();
      assertThat(error.getCode()).isEqualTo(ErrorCodeP.LIMIT_EXCEEDED);
      assertThat(error.getMessage())
          .contains("refused a push whose header is " + (120 << 20) + " bytes")
          .contains("faro.network.max.parts.per.push");
      assertThat(TransportServerLimitsTest.closedByServer(emptyParts)).isTrue();
      assertThat(mostCharged.get()).as("nothing of it buffered").isLessThan(64 * 1024);

      // 2,000 empty parts (4,000 bytes: within what 100 parts may take, so the header passes), but
      // more objects than the 100-part limit: refused once its meta arrived, before it is parsed.
      byte[] meta = new byte[4_000];
      for (int i = 0; i < meta.length; i += 2) {
        meta[i] = 0x12;
      }
      OutputStream out = emptyObjects.getOutputStream();
      out.write(header(MessageType.PUSH_REQUEST, 4, meta.length, 1_000 * batchHeader()));
      out.write(meta);
      out.write(new byte[1_000 * batchHeader()]);
      ErrorResponse objects = read(emptyObjects).error();
      assertThat(objects.getCode()).isEqualTo(ErrorCodeP.LIMIT_EXCEEDED);
      assertThat(objects.getMessage())
          .contains("refused a PUSH_REQUEST before parsing it")
          .contains("faro.network.max.parts.per.push");

      // 110 parts: with the shuffle's key and app id, over 100 parts and the few fields a newer
      // client may add.
      send(overLimit, MessageType.PUSH_REQUEST, 3, push(110), 110 * batchHeader());
      assertThat(read(overLimit).error().getMessage()).contains("more than 108 objects");
      assertThat(handled.get()).isEqualTo(1);
    }
  }

  private static int batchHeader() {
    return io.faro.common.batch.BatchFormat.HEADER;
  }

  @Test
  void anyMetaOverTheObjectLimitIsRefusedBeforeParsing() throws Exception {
    try (TransportServer server = server(network(false, "faro.network.max.meta.objects", "1000"));
        Socket socket = connect(server)) {
      // A status request with 2,000 unknown length-delimited fields.
      byte[] meta = new byte[4_000];
      for (int i = 0; i < meta.length; i += 2) {
        meta[i] = 0x7a; // field 15, length-delimited, length 0
      }
      OutputStream out = socket.getOutputStream();
      out.write(header(MessageType.MASTER_STATUS_REQUEST, 4, meta.length, 0));
      out.write(meta);
      ErrorResponse error = read(socket).error();
      assertThat(ErrorCode.fromProto(error.getCode())).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
      assertThat(error.getMessage()).contains("faro.network.max.meta.objects");
      assertThat(handled.get()).isZero();
    }
  }
}
