package io.faro.common.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.faro.proto.MessageType;
import io.faro.proto.PushPart;
import io.faro.proto.PushRequest;
import io.faro.proto.ShuffleKeyP;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FrameCodecTest {
  private static final int MAX = 64 * 1024;

  private static PushRequest meta() {
    return PushRequest.newBuilder()
        .setShuffle(ShuffleKeyP.newBuilder().setAppId("app-1").setShuffleId(3))
        .addParts(PushPart.newBuilder().setPartitionId(7).setEpoch(1).setLength(5))
        .build();
  }

  /** Encodes a frame with the real encoder and returns its bytes. */
  private static ByteBuf encode(FrameKind kind, long requestId, ByteBuf body) {
    EmbeddedChannel out = new EmbeddedChannel(FrameEncoder.INSTANCE);
    out.writeOutbound(new OutboundFrame(kind, requestId, meta(), body));
    ByteBuf all = Unpooled.buffer();
    Object part;
    while ((part = out.readOutbound()) != null) {
      ByteBuf b = (ByteBuf) part;
      all.writeBytes(b);
      b.release();
    }
    out.finishAndReleaseAll();
    return all;
  }

  @Test
  void roundTripsKindTypeRequestIdMetaAndBody() {
    ByteBuf bytes =
        encode(FrameKind.REQUEST, 42L, Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII));
    EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX));
    in.writeInbound(bytes);
    Frame frame = in.readInbound();
    try {
      assertThat(frame.kind()).isEqualTo(FrameKind.REQUEST);
      assertThat(frame.type()).isEqualTo(MessageType.PUSH_REQUEST);
      assertThat(frame.requestId()).isEqualTo(42L);
      assertThat(frame.meta(PushRequest.class)).isEqualTo(meta());
      assertThat(frame.body().toString(StandardCharsets.US_ASCII)).isEqualTo("hello");
    } finally {
      frame.release();
    }
    assertThat(in.finish()).isFalse();
  }

  @Test
  void reassemblesFramesSplitAtEveryByteAndBackToBack() {
    ByteBuf one = encode(FrameKind.RESPONSE, 1L, Unpooled.wrappedBuffer(new byte[300]));
    ByteBuf two = encode(FrameKind.RESPONSE, 2L, null);
    ByteBuf both = Unpooled.wrappedBuffer(one, two);
    EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX));
    while (both.isReadable()) {
      in.writeInbound(both.readRetainedSlice(1));
    }
    both.release();
    Frame first = in.readInbound();
    Frame second = in.readInbound();
    assertThat(first.requestId()).isEqualTo(1L);
    assertThat(first.body().readableBytes()).isEqualTo(300);
    assertThat(second.requestId()).isEqualTo(2L);
    assertThat(second.body().readableBytes()).isZero();
    first.release();
    second.release();
    assertThat((Object) in.readInbound()).isNull();
    in.finishAndReleaseAll();
  }

  @Test
  void compositeBodiesAreSlicesOfTheReceivedBuffersAndContiguousOnesAreCopies() {
    byte[] payload = new byte[40_000];
    new Random(3).nextBytes(payload);
    for (FrameDecoder.Bodies mode : FrameDecoder.Bodies.values()) {
      ByteBuf bytes = encode(FrameKind.REQUEST, 11L, Unpooled.wrappedBuffer(payload));
      EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX, mode));
      List<ByteBuf> pieces = new ArrayList<>();
      while (bytes.isReadable()) {
        // Reads this large are queued as they are (smaller ones are copied together).
        ByteBuf piece =
            Unpooled.directBuffer(7000).writeBytes(bytes, Math.min(7000, bytes.readableBytes()));
        pieces.add(piece.retain());
        in.writeInbound(piece);
      }
      bytes.release();
      Frame frame = in.readInbound();
      byte[] body = new byte[frame.body().readableBytes()];
      frame.body().getBytes(frame.body().readerIndex(), body);
      assertThat(body).isEqualTo(payload);
      // A composite body holds the received buffers; a contiguous one let them go.
      long held = pieces.stream().filter(p -> p.refCnt() > 1).count();
      if (mode == FrameDecoder.Bodies.COMPOSITE) {
        assertThat(frame.body()).isInstanceOf(io.netty.buffer.CompositeByteBuf.class);
        assertThat(held).isGreaterThan(1);
      } else {
        assertThat(held).isZero();
      }
      frame.release();
      assertThat(pieces).allSatisfy(p -> assertThat(p.refCnt()).isEqualTo(1));
      pieces.forEach(ByteBuf::release);
      assertThat(in.finish()).isFalse();
    }
  }

  @Test
  void aSmallBodyInALargeReceiveBufferIsCopiedSoThatItDoesNotPinTheBuffer() {
    for (FrameDecoder.Bodies mode : FrameDecoder.Bodies.values()) {
      ByteBuf small = encode(FrameKind.REQUEST, 13L, Unpooled.wrappedBuffer(new byte[5000]));
      ByteBuf large = encode(FrameKind.REQUEST, 14L, Unpooled.wrappedBuffer(new byte[60_000]));
      EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX, mode));
      // Each frame arrives alone in a receive buffer of 64 KiB, as from a peer that sends small
      // frames one at a time.
      ByteBuf[] reads = new ByteBuf[2];
      int i = 0;
      for (ByteBuf frameBytes : List.of(small, large)) {
        // Unpooled: a pooled buffer's object is recycled once released, and its refCnt would
        // then be that of the next buffer.
        ByteBuf read =
            io.netty.buffer.UnpooledByteBufAllocator.DEFAULT
                .directBuffer(64 * 1024)
                .writeBytes(frameBytes);
        frameBytes.release();
        reads[i++] = read;
        in.writeInbound(read);
      }
      Frame first = in.readInbound();
      Frame second = in.readInbound();
      // The 5,000-byte body was copied: its receive buffer went back at once.
      assertThat(reads[0].refCnt()).as(mode + ": the small frame's receive buffer").isZero();
      assertThat(first.body().readableBytes()).isEqualTo(5000);
      // The 60,000-byte body fills most of its buffer: a slice, no copy.
      assertThat(reads[1].refCnt()).as(mode + ": the large frame's receive buffer").isPositive();
      first.release();
      second.release();
      assertThat(reads[1].refCnt()).isZero();
      assertThat(in.finish()).isFalse();
    }
  }

  @Test
  void aFrameTrickledByteByByteIsCopiedNotQueuedBufferByBuffer() {
    byte[] payload = new byte[20_000];
    new Random(5).nextBytes(payload);
    ByteBuf bytes = encode(FrameKind.REQUEST, 12L, Unpooled.wrappedBuffer(payload));
    EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX, FrameDecoder.Bodies.COMPOSITE));
    List<ByteBuf> reads = new ArrayList<>();
    while (bytes.isReadable()) {
      // What a slow peer produces: a receive buffer of some capacity holding one byte.
      ByteBuf read =
          io.netty.buffer.PooledByteBufAllocator.DEFAULT
              .directBuffer(1024)
              .writeByte(bytes.readByte());
      reads.add(read);
      in.writeInbound(read);
    }
    bytes.release();
    // Each one-byte read was copied and released at once: none is held by the queue.
    assertThat(reads).allSatisfy(r -> assertThat(r.refCnt()).isZero());
    Frame frame = in.readInbound();
    byte[] body = new byte[frame.body().readableBytes()];
    frame.body().getBytes(frame.body().readerIndex(), body);
    assertThat(body).isEqualTo(payload);
    frame.release();
    assertThat(in.finish()).isFalse();
  }

  @Test
  void truncatedFrameWaitsAndProducesNothing() {
    ByteBuf bytes = encode(FrameKind.REQUEST, 5L, Unpooled.wrappedBuffer(new byte[100]));
    ByteBuf truncated = bytes.readRetainedSlice(bytes.readableBytes() - 10);
    bytes.release();
    EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX));
    in.writeInbound(truncated);
    assertThat((Object) in.readInbound()).isNull();
    assertThat(in.isOpen()).isTrue();
    in.finishAndReleaseAll();
  }

  @Test
  void oversizedLengthIsRejectedBeforeAnyBuffering() {
    EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX));
    ByteBuf bytes = Unpooled.buffer().writeInt(MAX + 1).writeByte(1);
    assertThatThrownBy(() -> in.writeInbound(bytes))
        .isInstanceOf(TooLongFrameException.class)
        .hasMessageContaining("exceeds the maximum " + MAX)
        .hasMessageContaining("faro.network.max.frame.size");
    in.finishAndReleaseAll();
  }

  @Test
  void garbageIsCorruptAndLaterBytesAreDiscarded() {
    EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX));
    byte[] garbage = new byte[64];
    new Random(7).nextBytes(garbage);
    // A plausible length, then a kind byte no frame has.
    ByteBuf bytes = Unpooled.buffer().writeInt(40).writeByte(99).writeBytes(garbage, 0, 40);
    assertThatThrownBy(() -> in.writeInbound(bytes))
        .isInstanceOf(DecoderException.class)
        .isInstanceOf(CorruptedFrameException.class)
        .hasMessageContaining("unknown frame kind 99");
    // After a failure the decoder swallows everything: no half-parsed frame ever surfaces.
    in.writeInbound(encode(FrameKind.REQUEST, 9L, null));
    assertThat((Object) in.readInbound()).isNull();
    in.finishAndReleaseAll();
  }

  @Test
  void unknownMessageTypeAndBadMetaAreCorrupt() {
    EmbeddedChannel a = new EmbeddedChannel(new FrameDecoder(MAX));
    ByteBuf unknownType =
        Unpooled.buffer().writeInt(15).writeByte(1).writeShort(999).writeLong(1).writeInt(0);
    assertThatThrownBy(() -> a.writeInbound(unknownType))
        .hasMessageContaining("unknown message type 999");
    a.finishAndReleaseAll();

    EmbeddedChannel b = new EmbeddedChannel(new FrameDecoder(MAX));
    ByteBuf badMeta =
        Unpooled.buffer()
            .writeInt(15 + 3)
            .writeByte(1)
            .writeShort(MessageType.PUSH_REQUEST_VALUE)
            .writeLong(1)
            .writeInt(3)
            .writeBytes(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff});
    assertThatThrownBy(() -> b.writeInbound(badMeta))
        .hasMessageContaining("unparsable PUSH_REQUEST meta");
    b.finishAndReleaseAll();

    EmbeddedChannel c = new EmbeddedChannel(new FrameDecoder(MAX));
    ByteBuf metaTooLong =
        Unpooled.buffer()
            .writeInt(15)
            .writeByte(1)
            .writeShort(MessageType.PUSH_REQUEST_VALUE)
            .writeLong(1)
            .writeInt(1000);
    assertThatThrownBy(() -> c.writeInbound(metaTooLong)).hasMessageContaining("does not fit");
    c.finishAndReleaseAll();
  }

  @Test
  void lengthBelowHeaderIsCorrupt() {
    EmbeddedChannel in = new EmbeddedChannel(new FrameDecoder(MAX));
    ByteBuf bytes = Unpooled.buffer().writeInt(3).writeBytes(new byte[3]);
    assertThatThrownBy(() -> in.writeInbound(bytes)).hasMessageContaining("below the header size");
    in.finishAndReleaseAll();
  }

  @Test
  void outboundFrameReleasesItsBodyWhenTheWriteFails() {
    ByteBuf body = Unpooled.directBuffer(8).writeLong(1);
    EmbeddedChannel channel = new EmbeddedChannel(FrameEncoder.INSTANCE);
    channel.close();
    channel.writeAndFlush(new OutboundFrame(FrameKind.REQUEST, 1, meta(), body));
    assertThat(body.refCnt()).isZero();
  }
}
