package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.faro.common.config.FaroConf;
import io.faro.common.testing.Eventually;
import io.faro.proto.EmptyResponse;
import io.faro.proto.MasterStatusRequest;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server bounds what one peer may cost it: idle and half-open connections close, one address
 * keeps a bounded number of connections, answers left unread close their connection, a request
 * larger than faro.network.max.request.size is refused, and the bytes of frames still arriving are
 * told to whoever counts memory.
 */
class TransportServerLimitsTest {
  private static NetworkSettings settings(String... keyValues) {
    // Limits of a server that asks no proof (TransportPreAuthTest has those before a proof).
    FaroConf conf =
        FaroConf.empty().with(NetworkOptions.IO_THREADS, "1").with("faro.auth.enabled", "false");
    for (int i = 0; i < keyValues.length; i += 2) {
      conf = conf.with(keyValues[i], keyValues[i + 1]);
    }
    return NetworkSettings.from(conf);
  }

  private static Socket connect(TransportServer server) throws IOException {
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
    socket.setSoTimeout(10_000);
    return socket;
  }

  /**
   * A whole request frame of type MASTER_STATUS_REQUEST with an empty meta, padded by {@code body}
   * bytes.
   */
  private static byte[] request(long id, int body) {
    return ByteBuffer.allocate(19 + body)
        .putInt(15 + body)
        .put((byte) 1)
        .putShort((short) io.faro.proto.MessageType.MASTER_STATUS_REQUEST_VALUE)
        .putLong(id)
        .putInt(0)
        .put(new byte[body])
        .array();
  }

  /** Whether the server closes the connection within the socket's timeout. */
  static boolean closedByServer(Socket socket) throws IOException {
    try {
      InputStream in = socket.getInputStream();
      while (true) {
        if (in.read(new byte[8192]) < 0) {
          return true;
        }
      }
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  @Test
  void anIdleConnectionClosesButOneWaitingForAnAnswerDoesNot() throws Exception {
    AtomicReference<Responder> held = new AtomicReference<>();
    try (TransportServer server =
            new TransportServer(
                "idle-test",
                "127.0.0.1",
                0,
                "faro.test.port",
                settings("faro.network.idle.timeout", "1s"),
                (request, responder) -> held.set(responder),
                null);
        Socket idle = connect(server);
        Socket waiting = connect(server)) {
      waiting.getOutputStream().write(request(1, 0));
      waiting.setSoTimeout(3_000);

      assertThat(closedByServer(idle)).as("an idle connection is closed").isTrue();
      assertThat(closedByServer(waiting))
          .as("a connection whose request is in progress stays")
          .isFalse();
      held.get().respond(EmptyResponse.getDefaultInstance());
      waiting.setSoTimeout(10_000);
      assertThat(closedByServer(waiting)).as("closed once answered and idle").isTrue();
    }
  }

  @Test
  void aConnectionThatStopsHalfwayThroughAFrameIsClosedAfterTheRequestTimeout() throws Exception {
    try (TransportServer server =
            new TransportServer(
                "stall-test",
                "127.0.0.1",
                0,
                "faro.test.port",
                settings("faro.network.request.timeout", "1s"),
                (request, responder) -> responder.respond(EmptyResponse.getDefaultInstance()),
                null);
        Socket stalled = connect(server);
        Socket quiet = connect(server)) {
      byte[] frame = request(1, 1_000);
      stalled.getOutputStream().write(frame, 0, 500);
      quiet.setSoTimeout(3_000);

      assertThat(closedByServer(stalled)).isTrue();
      assertThat(closedByServer(quiet))
          .as("nothing sent, nothing held: only the idle timeout applies")
          .isFalse();
    }
  }

  @Test
  void onePeerKeepsAtMostTheConfiguredConnections() throws Exception {
    try (TransportServer server =
        new TransportServer(
            "peer-test",
            "127.0.0.1",
            0,
            "faro.test.port",
            settings("faro.network.max.connections.per.peer", "3"),
            (request, responder) -> responder.respond(EmptyResponse.getDefaultInstance()),
            null)) {
      List<Socket> kept = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          kept.add(connect(server));
        }
        try (Socket fourth = connect(server)) {
          assertThat(closedByServer(fourth)).isTrue();
        }
        kept.get(0).setSoTimeout(500);
        assertThat(closedByServer(kept.get(0))).isFalse();
        kept.remove(0).close();
        // The closed one frees its place (the server hears of the close asynchronously).
        boolean admitted = false;
        for (int attempt = 0; attempt < 50 && !admitted; attempt++) {
          Socket next = connect(server);
          next.setSoTimeout(200);
          admitted = !closedByServer(next);
          kept.add(next);
        }
        assertThat(admitted).isTrue();
      } finally {
        for (Socket s : kept) {
          s.close();
        }
      }
    }
  }

  @Test
  void aPeerThatNeverReadsItsAnswersIsClosed() throws Exception {
    byte[] answer = new byte[1 << 20];
    try (TransportServer server =
            new TransportServer(
                "unread-test",
                "127.0.0.1",
                0,
                "faro.test.port",
                settings("faro.network.max.pending.answer.bytes", "8m"),
                (request, responder) ->
                    responder.respond(
                        EmptyResponse.getDefaultInstance(), Unpooled.wrappedBuffer(answer)),
                null);
        Socket socket = connect(server)) {
      assertThat(closedAfterUnreadAnswers(socket)).isTrue();
    }
  }

  /**
   * Sends up to 400 requests for 1 MiB answers and reads none: kernel buffers fill, then the
   * server's 8m. Whether the server closed the connection.
   */
  private static boolean closedAfterUnreadAnswers(Socket socket) throws IOException {
    socket.setReceiveBufferSize(64 * 1024);
    DataOutputStream out = new DataOutputStream(socket.getOutputStream());
    for (int i = 0; i < 400; i++) {
      try {
        out.write(request(i, 0));
        out.flush();
      } catch (IOException e) {
        return true;
      }
    }
    return closedByServer(socket);
  }

  /**
   * Answers sent from a file count against faro.network.max.pending.answer.bytes too (Netty's
   * default estimate of a file region is 0 bytes): a peer that never reads them is closed, and the
   * regions it left are released (their files closed).
   */
  @Test
  void aPeerThatNeverReadsAnswersSentFromFilesIsClosed(@TempDir Path dir) throws Exception {
    Path file = Files.write(dir.resolve("chunk"), new byte[1 << 20]);
    List<DefaultFileRegion> regions = java.util.Collections.synchronizedList(new ArrayList<>());
    try (TransportServer server =
            new TransportServer(
                "unread-region-test",
                "127.0.0.1",
                0,
                "faro.test.port",
                settings("faro.network.max.pending.answer.bytes", "8m"),
                (request, responder) -> {
                  assertThat(responder.takesFileRegions()).isTrue();
                  DefaultFileRegion region = new DefaultFileRegion(file.toFile(), 0, 1 << 20);
                  regions.add(region);
                  responder.respondFromFile(EmptyResponse.getDefaultInstance(), region);
                },
                null);
        Socket socket = connect(server)) {
      assertThat(closedAfterUnreadAnswers(socket)).isTrue();
      assertThat(regions).hasSizeLessThan(400);
      Eventually.await(
          "every region answered or dropped is released",
          () -> {
            synchronized (regions) {
              return regions.stream().allMatch(r -> r.refCnt() == 0);
            }
          });
    }
  }

  @Test
  void aRequestLargerThanTheRequestLimitClosesTheConnection() throws Exception {
    try (TransportServer server =
            new TransportServer(
                "size-test",
                "127.0.0.1",
                0,
                "faro.test.port",
                settings("faro.network.max.request.size", "64k"),
                (request, responder) -> responder.respond(EmptyResponse.getDefaultInstance()),
                null);
        Socket small = connect(server);
        Socket large = connect(server)) {
      small.getOutputStream().write(request(1, 60 * 1024));
      large.getOutputStream().write(request(1, 65 * 1024));

      assertThat(small.getInputStream().read()).as("an answer").isNotNegative();
      assertThat(closedByServer(large)).isTrue();
    }
  }

  @Test
  void theBytesOfFramesStillArrivingAreToldAsTheyComeAndGo() {
    AtomicLong held = new AtomicLong();
    EmbeddedChannel channel =
        new EmbeddedChannel(
            new FrameDecoder(1 << 20, FrameDecoder.Bodies.COMPOSITE, held::addAndGet));
    byte[] frame = request(7, 10_000);

    channel.writeInbound(Unpooled.wrappedBuffer(frame, 0, 6_000));
    // All but the fixed header, which is read (and checked) as soon as it arrives.
    assertThat(held.get()).isEqualTo(6_000 - FrameCodec.HEADER);
    channel.writeInbound(Unpooled.wrappedBuffer(frame, 6_000, frame.length - 6_000));
    Frame decoded = channel.readInbound();
    assertThat(decoded.meta()).isEqualTo(MasterStatusRequest.getDefaultInstance());
    assertThat(held.get()).as("a whole frame is the handler's to count").isZero();
    decoded.release();

    channel.writeInbound(Unpooled.wrappedBuffer(frame, 0, 9_000));
    assertThat(held.get()).isEqualTo(9_000 - FrameCodec.HEADER);
    channel.close();
    assertThat(held.get()).as("a connection that closes mid-frame gives its bytes back").isZero();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void theBytesOfAConnectionAreChargedOnlyFromItsProofOn() {
    AtomicLong held = new AtomicLong();
    java.util.concurrent.atomic.AtomicBoolean proven =
        new java.util.concurrent.atomic.AtomicBoolean();
    FrameLimits limits =
        new FrameLimits() {
          @Override
          public Refusal refusal(io.faro.proto.MessageType type, int frameLength, int metaLength) {
            return null;
          }

          @Override
          public int maxObjects(io.faro.proto.MessageType type, int bodyLength) {
            return Integer.MAX_VALUE;
          }

          @Override
          public boolean proven() {
            return proven.get();
          }
        };
    EmbeddedChannel channel =
        new EmbeddedChannel(
            new FrameDecoder(1 << 20, FrameDecoder.Bodies.COMPOSITE, held::addAndGet, limits));
    byte[] frame = request(7, 10_000);

    channel.writeInbound(Unpooled.wrappedBuffer(frame, 0, 3_000));
    assertThat(held.get()).as("nothing charged before the proof").isZero();
    proven.set(true);
    channel.writeInbound(Unpooled.wrappedBuffer(frame, 3_000, 3_000));
    assertThat(held.get())
        .as("from the proof on, what it holds, held before it too")
        .isEqualTo(6_000 - FrameCodec.HEADER);
    channel.writeInbound(Unpooled.wrappedBuffer(frame, 6_000, frame.length - 6_000));
    Frame decoded = channel.readInbound();
    decoded.release();
    assertThat(held.get()).isZero();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  /**
   * On a port without a memory budget, what one peer's connections hold of frames still arriving is
   * bounded: the connection that takes it over faro.network.max.partial.bytes.per.peer closes, the
   * others and whole requests go on.
   */
  @Test
  void whatOnePeersHalfSentFramesHoldIsBounded() throws Exception {
    try (TransportServer server =
            new TransportServer(
                "partial-test",
                "127.0.0.1",
                0,
                "faro.test.port",
                settings(
                    "faro.network.max.request.size", "4m",
                    "faro.network.max.partial.bytes.per.peer", "1m"),
                (request, responder) -> responder.respond(EmptyResponse.getDefaultInstance()),
                null);
        Socket first = connect(server);
        Socket second = connect(server);
        Socket third = connect(server);
        Socket whole = connect(server)) {
      byte[] frame = request(1, 3 << 20);
      first.getOutputStream().write(frame, 0, 400 * 1024);
      second.getOutputStream().write(frame, 0, 400 * 1024);
      first.setSoTimeout(1_000);
      second.setSoTimeout(1_000);
      assertThat(closedByServer(first)).as("within the bound").isFalse();
      try {
        third.getOutputStream().write(frame, 0, 400 * 1024);
      } catch (IOException closedAlready) {
        // Closed while the peer still wrote.
      }
      assertThat(closedByServer(third)).as("over the bound").isTrue();
      assertThat(closedByServer(second)).isFalse();
      whole.getOutputStream().write(request(2, 10));
      assertThat(whole.getInputStream().read()).as("a whole request is answered").isNotNegative();
    }
  }
}
