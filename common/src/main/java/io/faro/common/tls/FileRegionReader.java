package io.faro.common.tls;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.FileRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * On an encrypted connection, turns each {@link FileRegion} written (a fetched chunk larger than
 * the disk reader's buffers, which a plain connection sends with sendfile) into one buffer read
 * from the file, which the cipher then takes: sendfile cannot apply once the bytes must be
 * encrypted. Like sendfile on a plain connection, the read runs on the connection's event loop;
 * unlike it, all at once, so such a chunk stalls that loop for its whole read (chunks within the
 * reader's buffers, nearly all, are read on the disk's reader threads either way). The buffer waits
 * in the connection's outbound buffer like every other answer, so it counts against
 * faro.network.max.pending.answer.bytes (a client that stops reading cannot make them pile up), and
 * it is no larger than the frame limit. The region is released once read, or when the read fails
 * (which fails that write and closes the connection).
 */
final class FileRegionReader extends ChannelOutboundHandlerAdapter {
  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (!(msg instanceof FileRegion region)) {
      ctx.write(msg, promise);
      return;
    }
    ByteBuf bytes = null;
    try {
      long count = region.count();
      if (count > Integer.MAX_VALUE) {
        throw new IOException("a file region of " + count + " bytes exceeds any frame");
      }
      bytes = ctx.alloc().directBuffer((int) count);
      IntoBuffer target = new IntoBuffer(bytes, (int) count);
      long done = 0;
      while (done < count) {
        long moved = region.transferTo(target, done);
        if (moved <= 0) {
          throw new IOException(
              "the file of a fetched chunk ended early: "
                  + (region.position() + done)
                  + " of "
                  + (region.position() + count)
                  + " bytes");
        }
        done += moved;
      }
    } catch (IOException | RuntimeException e) {
      if (bytes != null) {
        bytes.release();
      }
      region.release();
      promise.setFailure(e);
      ctx.close();
      return;
    }
    region.release();
    ctx.write(bytes, promise);
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
