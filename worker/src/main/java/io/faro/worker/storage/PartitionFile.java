package io.faro.worker.storage;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionKey;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The file of one partition while it is written ({@link PartitionFileFormat}). Created on the first
 * write, so that reserving tens of thousands of partitions costs no file handles.
 *
 * <p>With direct I/O ({@link DirectIo}) every write goes through the flusher thread's aligned
 * staging buffer and only whole blocks reach the disk; the last partial block of the data (fewer
 * than {@link DirectIo#alignment()} bytes) waits on the heap for the next write. {@link #finish}
 * writes that tail, the index and the trailer through the page cache, so a file written either way
 * has the same bytes.
 *
 * <p>Thread-safety: confined to the partition's flusher thread (see {@link DiskFlusher}); every
 * method must run there. After the first failure every further write is skipped and {@link #finish}
 * reports the failure, so one bad write never leaves a file with a hole in it.
 */
public final class PartitionFile {
  /**
   * Checks, before reading, that {@code file} (open as {@code channel}) holds the bytes up to
   * {@code end}: a file shorter than its index says (truncated, replaced) is a storage failure,
   * named with {@code what} (which chunk of which partition).
   */
  public static void requireBytesUpTo(FileChannel channel, Path file, long end, String what)
      throws IOException {
    long size = channel.size();
    if (size < end) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED,
          "file " + file + " has " + size + " bytes, " + what + " ends at " + end);
    }
  }

  private final PartitionKey key;
  private final Path path;
  private final DirectIo direct;
  private FileChannel channel;

  /** Data bytes written, including a direct write's {@link #tail}. */
  private long written;

  /** Direct I/O only: bytes after the last whole block, not yet on disk. */
  private byte[] tail = new byte[0];

  private IOException failure;
  // Hears of every byte this file adds to its disk, and of their removal when it is deleted.
  private final FileAccounting usage;
  private long counted;

  /** A file written through the page cache. */
  public PartitionFile(PartitionKey key, Path path) {
    this(key, path, null);
  }

  /** A file written with {@code direct} I/O, or through the page cache when it is null. */
  public PartitionFile(PartitionKey key, Path path, DirectIo direct) {
    this(key, path, direct, bytes -> {});
  }

  /**
   * As {@link #PartitionFile(PartitionKey, Path, DirectIo)}, telling {@code usage} of the bytes it
   * takes and of the time its writes take.
   */
  public PartitionFile(PartitionKey key, Path path, DirectIo direct, FileAccounting usage) {
    this.key = requireNonNull(key, "key is null");
    this.path = requireNonNull(path, "path is null");
    this.direct = direct;
    this.usage = requireNonNull(usage, "usage is null");
  }

  private void count(long bytes) {
    counted += bytes;
    usage.used(bytes);
  }

  public Path path() {
    return path;
  }

  public PartitionKey key() {
    return key;
  }

  /** The first write error, if any. */
  public Optional<IOException> failure() {
    return Optional.ofNullable(failure);
  }

  /**
   * Appends the readable bytes of {@code buffers}, in order, with gathering writes. Borrows the
   * buffers: the caller releases them. A failure is remembered, not thrown.
   */
  public void write(List<ByteBuf> buffers) {
    if (failure != null) {
      return;
    }
    long before = written;
    long started = System.nanoTime();
    try {
      ensureOpen();
      ByteBuffer[] sources = nioBuffers(buffers);
      if (direct != null) {
        writeDirect(sources);
        return;
      }
      long remaining = 0;
      for (ByteBuffer source : sources) {
        remaining += source.remaining();
      }
      int first = 0;
      while (remaining > 0) {
        long n = channel.write(sources, first, sources.length - first);
        remaining -= n;
        written += n;
        while (first < sources.length && !sources[first].hasRemaining()) {
          first++;
        }
      }
    } catch (IOException e) {
      fail(e);
    } finally {
      count(written - before);
      if (written > before) {
        usage.wrote(written - before, System.nanoTime() - started);
      }
    }
  }

  /**
   * Copies the tail and {@code sources} into the staging buffer and writes every whole block of it;
   * what is left after the last whole block becomes the new tail.
   */
  private void writeDirect(ByteBuffer[] sources) throws IOException {
    ByteBuffer staging = direct.staging();
    long onDisk = written - tail.length;
    staging.put(tail);
    for (ByteBuffer source : sources) {
      written += source.remaining();
      while (source.hasRemaining()) {
        int n = Math.min(source.remaining(), staging.remaining());
        staging.put(staging.position(), source, source.position(), n);
        staging.position(staging.position() + n);
        source.position(source.position() + n);
        if (!staging.hasRemaining()) {
          DirectIo.writeFully(channel, staging.flip(), onDisk);
          onDisk += staging.limit();
          staging.clear();
        }
      }
    }
    int staged = staging.position();
    int whole = (int) direct.alignDown(staged);
    if (whole > 0) {
      DirectIo.writeFully(channel, staging.duplicate().position(0).limit(whole), onDisk);
    }
    tail = new byte[staged - whole];
    staging.get(whole, tail);
  }

  /**
   * Writes the index and trailer, forces the file to disk when {@code sync}
   * (faro.worker.commit.sync) and closes it; then reads the index back so that what fetches serve
   * is what the file says.
   *
   * @param chunks the chunk boundaries; must end at the number of bytes written
   * @return the file's chunk index, or an empty optional when nothing was written (no file)
   * @throws IOException the first write error, or the error of this step
   */
  public Optional<ChunkIndex> finish(ChunkIndex chunks, boolean sync) throws IOException {
    if (failure != null) {
      throw failure;
    }
    if (chunks.dataLength() != written) {
      fail(
          new IOException(
              "partition "
                  + key
                  + " wrote "
                  + written
                  + " bytes but its chunk index ends at "
                  + chunks.dataLength()));
      throw failure;
    }
    if (written == 0) {
      return Optional.empty();
    }
    try {
      ByteBuffer footer = PartitionFileFormat.encodeFooter(chunks);
      count(footer.remaining());
      if (direct != null) {
        // The rest is not a whole block: write it through the page cache, after the blocks.
        channel.close();
        channel = FileChannel.open(path, StandardOpenOption.WRITE);
        long onDisk = written - tail.length;
        DirectIo.writeFully(channel, ByteBuffer.wrap(tail), onDisk);
        DirectIo.writeFully(channel, footer, written);
        tail = new byte[0];
      } else {
        while (footer.hasRemaining()) {
          channel.write(footer);
        }
      }
      if (sync) {
        channel.force(true);
      }
      channel.close();
      channel = null;
    } catch (IOException e) {
      fail(e);
      throw failure;
    }
    return Optional.of(PartitionFileReader.readIndex(path));
  }

  /** Closes and deletes the file, if it was created. */
  public void delete() throws IOException {
    closeQuietly();
    if (Files.deleteIfExists(path)) {
      count(-counted);
    }
  }

  private void ensureOpen() throws IOException {
    if (channel != null) {
      return;
    }
    // Opened first, its directories made only when missing: the shuffle's other partitions have
    // usually made them, and making them again costs a mkdir and an exception per file (a
    // commit of many small partitions creates one file each).
    try {
      channel = open();
      return;
    } catch (NoSuchFileException e) {
      // Not made yet.
    }
    for (int attempt = 1; ; attempt++) {
      try {
        Files.createDirectories(path.getParent());
        channel = open();
        return;
      } catch (NoSuchFileException e) {
        // The expiry of another shuffle of the app (on another flush thread) removed the app
        // directory while ours were made, or between our mkdir and our open: once more.
        if (attempt >= 2) {
          throw e;
        }
      }
    }
  }

  private FileChannel open() throws IOException {
    if (direct != null) {
      return direct.openForWrite(path);
    }
    return FileChannel.open(
        path,
        StandardOpenOption.CREATE,
        StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING);
  }

  private void fail(IOException e) {
    failure =
        new IOException(
            "cannot write partition file " + path + " of " + key + ": " + e.getMessage(), e);
    closeQuietly();
  }

  private void closeQuietly() {
    tail = new byte[0];
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // The file is failed or being deleted: nothing useful to do with a close error.
      }
      channel = null;
    }
  }

  /** The readable bytes of {@code buffers}, in order, as NIO buffers for a gathering write. */
  static ByteBuffer[] nioBuffers(List<ByteBuf> buffers) {
    List<ByteBuffer> sources = new ArrayList<>(buffers.size());
    for (ByteBuf buffer : buffers) {
      if (buffer.isReadable()) {
        for (ByteBuffer b : buffer.nioBuffers(buffer.readerIndex(), buffer.readableBytes())) {
          sources.add(b);
        }
      }
    }
    return sources.toArray(new ByteBuffer[0]);
  }
}
