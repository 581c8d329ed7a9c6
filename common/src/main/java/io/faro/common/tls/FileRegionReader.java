package io.faro.common.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.FileRegion;
import io.netty.handler.stream.ChunkedInput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * On an encrypted connection, turns each {@link FileRegion} written (a fetched chunk served with
 * sendfile on a plain connection) into pieces of {@value #PIECE_BYTES} bytes read from the file as
 * the socket drains, which the {@code ChunkedWriteHandler} after it hands to the cipher: sendfile
 * cannot apply once the bytes must be encrypted, and reading the whole region at once would hold it
 * all in memory. The region is released when its last piece is read or the write fails.
 */
final class FileRegionReader extends ChannelOutboundHandlerAdapter {
  static final int PIECE_BYTES = 256 * 1024;

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (msg instanceof FileRegion region) {
      ctx.write(new Pieces(region), promise);
    } else {
      ctx.write(msg, promise);
    }
  }

  /** A file region read piece by piece; owns the region. */
  private static final class Pieces implements ChunkedInput<ByteBuf> {
    private final FileRegion region;
    private long done;
    private boolean released;

    Pieces(FileRegion region) {
      this.region = region;
    }

    @Override
    public boolean isEndOfInput() {
      return done >= region.count();
    }

    @Override
    public void close() {
      if (!released) {
        released = true;
        region.release();
      }
    }

    @Override
    @Deprecated
    public ByteBuf readChunk(ChannelHandlerContext ctx) throws IOException {
      return readChunk(ctx.alloc());
    }

    @Override
    public ByteBuf readChunk(ByteBufAllocator allocator) throws IOException {
      if (isEndOfInput()) {
        return null;
      }
      int size = (int) Math.min(PIECE_BYTES, region.count() - done);
      ByteBuf piece = allocator.directBuffer(size);
      try {
        IntoBuffer target = new IntoBuffer(piece, size);
        while (piece.writerIndex() < size) {
          long moved = region.transferTo(target, done);
          if (moved <= 0) {
            throw new IOException(
                "the file of a fetched chunk ended early: "
                    + (region.position() + done)
                    + " of "
                    + (region.position() + region.count())
                    + " bytes");
          }
          done += moved;
        }
        return piece;
      } catch (IOException | RuntimeException e) {
        piece.release();
        throw e;
      }
    }

    @Override
    public long length() {
      return region.count();
    }

    @Override
    public long progress() {
      return done;
    }
  }

  /** A channel that fills one buffer up to a limit. */
  private static final class IntoBuffer implements WritableByteChannel {
    private final ByteBuf buffer;
    private final int limit;

    IntoBuffer(ByteBuf buffer, int limit) {
      this.buffer = buffer;
      this.limit = limit;
    }

    @Override
    public int write(ByteBuffer src) {
      int n = Math.min(src.remaining(), limit - buffer.writerIndex());
      ByteBuffer slice = src.slice();
      slice.limit(n);
      buffer.writeBytes(slice);
      src.position(src.position() + n);
      return n;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }
}
