package io.faro.worker.storage;

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

/**
 * A run of the {@link Layout#RUNS} layout: the bytes that several locations of one shuffle had
 * buffered, written once, one location after another, in one sequential pass through the page
 * cache. A run holds only data; where each location's bytes lie is kept by the location ({@link
 * Extents}) and recorded with its commit, so the file needs no index of its own. Runs are named
 * {@code <disk>/<app>/<shuffle>/run-<n>.data} ({@link FileLayout#runFile}) and deleted with their
 * shuffle's directory.
 *
 * <p>Called on the flusher thread of the shuffle's runs on that disk.
 */
public final class RunFile {
  private RunFile() {}

  /**
   * Writes {@code pieces} (each a location's buffers, in order) one after another into the new file
   * {@code path}, and returns the extent of each piece. Borrows the buffers. A failure deletes what
   * was written of the file.
   */
  public static List<Extent> write(Path path, List<List<ByteBuf>> pieces, FileAccounting usage)
      throws IOException {
    List<ByteBuffer> sources = new ArrayList<>();
    List<Extent> extents = new ArrayList<>(pieces.size());
    long offset = 0;
    for (List<ByteBuf> piece : pieces) {
      long length = 0;
      for (ByteBuffer b : PartitionFile.nioBuffers(piece)) {
        length += b.remaining();
        sources.add(b);
      }
      extents.add(new Extent(path, offset, length));
      offset += length;
    }
    long started = System.nanoTime();
    long written = 0;
    try (FileChannel channel = create(path)) {
      ByteBuffer[] all = sources.toArray(new ByteBuffer[0]);
      int first = 0;
      while (written < offset) {
        written += channel.write(all, first, Math.min(all.length - first, 1024));
        while (first < all.length && !all[first].hasRemaining()) {
          first++;
        }
      }
    } catch (IOException e) {
      deleteQuietly(path);
      throw new IOException("cannot write run " + path + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      deleteQuietly(path);
      throw e;
    }
    usage.used(written);
    if (written > 0) {
      usage.wrote(written, System.nanoTime() - started);
    }
    return extents;
  }

  /** Forces {@code path}, a run written earlier, to the disk. */
  public static void force(Path path) throws IOException {
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
  }

  private static FileChannel create(Path path) throws IOException {
    try {
      return open(path);
    } catch (NoSuchFileException e) {
      // The shuffle's directory is not made yet (the first run of the shuffle on this disk).
      Files.createDirectories(path.getParent());
      return open(path);
    }
  }

  private static FileChannel open(Path path) throws IOException {
    return FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
  }

  /** Deletes what a failed write left (not counted yet). */
  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      // Left as a leftover: deleted with its shuffle's directory, or at the next start.
    }
  }
}
