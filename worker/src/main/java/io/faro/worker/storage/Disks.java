package io.faro.worker.storage;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.ShuffleId;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The worker's disks, in {@code faro.worker.dirs} order, and their flushers. Owns the flushers. */
public final class Disks implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Disks.class);

  private final List<Disk> disks;

  private Disks(List<Disk> disks) {
    this.disks = List.copyOf(disks);
  }

  /**
   * Creates every directory and starts {@code threadsPerDisk} flusher threads per disk, named
   * {@code <threadPrefix>-d<index>-N}.
   *
   * @throws FaroException STORAGE_FAILED naming the directory that cannot be created
   */
  public static Disks open(List<DiskDir> dirs, int threadsPerDisk, String threadPrefix) {
    List<Disk> disks = new ArrayList<>();
    for (DiskDir dir : dirs) {
      try {
        Files.createDirectories(dir.path());
      } catch (IOException e) {
        disks.forEach(d -> d.flusher().close());
        throw new FaroException(ErrorCode.STORAGE_FAILED,
            "cannot create worker directory " + dir.path() + " (faro.worker.dirs): " + e, e);
      }
      int index = disks.size();
      disks.add(new Disk(index, dir, new DiskFlusher(threadPrefix + "-d" + index, threadsPerDisk)));
    }
    return new Disks(disks);
  }

  public List<Disk> all() {
    return disks;
  }

  public int size() {
    return disks.size();
  }

  /** @throws IndexOutOfBoundsException for an index not in faro.worker.dirs */
  public Disk get(int index) {
    return disks.get(index);
  }

  /**
   * Removes the directories of {@code shuffle} on every disk (with any file left in them), and
   * the app directory once it is empty. Runs on each disk's flusher; call it after the
   * shuffle's partition files are deleted, so no flusher writes into them any more.
   */
  public CompletableFuture<Void> deleteShuffleDirectories(ShuffleId shuffle) {
    CompletableFuture<?>[] perDisk =
        disks.stream()
            .map(d -> CompletableFuture.runAsync(() -> deleteShuffleDirectory(d, shuffle), d.flusher().anyThread()))
            .toArray(CompletableFuture[]::new);
    return CompletableFuture.allOf(perDisk);
  }

  private static void deleteShuffleDirectory(Disk disk, ShuffleId shuffle) {
    Path shuffleDir = FileLayout.shuffleDir(disk.root(), shuffle);
    try {
      deleteRecursively(shuffleDir);
      Files.deleteIfExists(FileLayout.appDir(disk.root(), shuffle.app()));
    } catch (DirectoryNotEmptyException e) {
      // Another shuffle of the same app still has files here: the app directory stays.
    } catch (IOException e) {
      LOG.warn("Cannot delete the files of shuffle {} under {}: {}", shuffle, shuffleDir, e.toString());
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        try {
          Files.deleteIfExists(p);
        } catch (NoSuchFileException ignored) {
          // Gone already.
        }
      }
    }
  }

  /** Stops every flusher after it ran its queued tasks. */
  @Override
  public void close() {
    disks.forEach(d -> d.flusher().close());
  }
}
