package io.faro.worker.storage;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Direct I/O ({@code O_DIRECT}) on one disk: the alignment its file system needs and the staging
 * buffers that writes go through.
 *
 * <p>Direct I/O moves data between the disk and our buffers without the page cache: no page cache
 * memory to allocate and write back (the largest CPU cost of a buffered write on a virtual
 * machine), no writeback bursts, no shuffle data crowding the page cache of the executors on the
 * same host. Its price: every transfer must start and end at multiples of {@link #alignment()},
 * from a buffer whose address is aligned too, and nothing written is cached for a later read.
 *
 * <p>Thread-safety: immutable apart from the staging buffers, one per thread.
 */
public final class DirectIo {
  /**
   * Size of a flusher thread's staging buffer (direct memory): one write per flush of a 256 KiB
   * buffer.
   */
  public static final int STAGING_BYTES = 1 << 20;

  private static final int MAX_ALIGNMENT = 64 * 1024;

  private final int alignment;
  private final ThreadLocal<ByteBuffer> staging;

  DirectIo(int alignment) {
    if (alignment < 512 || alignment > MAX_ALIGNMENT || Integer.bitCount(alignment) != 1) {
      throw new IllegalArgumentException(
          "alignment must be a power of two in [512, " + MAX_ALIGNMENT + "]: " + alignment);
    }
    this.alignment = alignment;
    this.staging = ThreadLocal.withInitial(() -> allocateAligned(STAGING_BYTES, alignment));
  }

  /** What {@link #probe} found: direct I/O, or why not. */
  public record Probe(DirectIo io, String unsupportedReason) {
    public boolean supported() {
      return io != null;
    }
  }

  /**
   * Finds out whether {@code dir}'s file system takes direct I/O by writing and reading back one
   * block of a scratch file (removed afterwards). Blocking.
   */
  public static Probe probe(Path dir) {
    int alignment;
    try {
      long blockSize = Files.getFileStore(dir).getBlockSize();
      alignment = (int) Math.max(512, Math.min(blockSize, Integer.MAX_VALUE));
    } catch (IOException | UnsupportedOperationException e) {
      return new Probe(null, "cannot read the block size of its file system: " + e);
    }
    if (alignment > MAX_ALIGNMENT || Integer.bitCount(alignment) != 1) {
      return new Probe(
          null,
          "its file system's block size "
              + alignment
              + " is not a power of two up to "
              + MAX_ALIGNMENT);
    }
    DirectIo io = new DirectIo(alignment);
    Path scratch =
        dir.resolve(".faro-direct-io-probe-" + ThreadLocalRandom.current().nextInt(1 << 30));
    try {
      ByteBuffer block = allocateAligned(alignment, alignment);
      block.putLong(0, 0x4641524F50524F42L);
      try (FileChannel out = io.openForWrite(scratch)) {
        writeFully(out, block, 0);
      }
      ByteBuffer back = allocateAligned(alignment, alignment);
      try (FileChannel in = io.openForRead(scratch)) {
        while (back.hasRemaining() && in.read(back, back.position()) > 0) {
          // Read until the block is back.
        }
      }
      if (back.getLong(0) != block.getLong(0)) {
        return new Probe(null, "a block written with O_DIRECT read back different");
      }
      return new Probe(io, null);
    } catch (IOException | UnsupportedOperationException e) {
      return new Probe(null, "O_DIRECT is refused: " + e);
    } finally {
      try {
        Files.deleteIfExists(scratch);
      } catch (IOException ignored) {
        // A leftover scratch file (a hidden name, a few KiB) is harmless.
      }
    }
  }

  /** Transfers start, end and sit in memory at multiples of this many bytes. */
  public int alignment() {
    return alignment;
  }

  /** Rounds {@code position} down to the alignment. */
  public long alignDown(long position) {
    return position & -(long) alignment;
  }

  /** Rounds {@code position} up to the alignment. */
  public long alignUp(long position) {
    return alignDown(position + alignment - 1);
  }

  /** The calling thread's staging buffer, cleared; its capacity is a multiple of the alignment. */
  ByteBuffer staging() {
    return staging.get().clear();
  }

  /** Creates (or truncates) {@code file} for direct writes. */
  FileChannel openForWrite(Path file) throws IOException {
    return FileChannel.open(
        file,
        new OpenOption[] {
          StandardOpenOption.CREATE,
          StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING,
          ExtendedOpenOption.DIRECT
        });
  }

  /** Opens {@code file} for direct reads. */
  FileChannel openForRead(Path file) throws IOException {
    return FileChannel.open(file, StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
  }

  /** A direct buffer of {@code size} bytes whose address is a multiple of {@code alignment}. */
  static ByteBuffer allocateAligned(int size, int alignment) {
    return ByteBuffer.allocateDirect(size + alignment).alignedSlice(alignment).limit(size).slice();
  }

  /** Writes all of {@code buffer} at {@code position}. */
  static void writeFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
    long at = position;
    while (buffer.hasRemaining()) {
      at += channel.write(buffer, at);
    }
  }
}
