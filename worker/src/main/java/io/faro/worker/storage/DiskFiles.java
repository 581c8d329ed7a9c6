package io.faro.worker.storage;

import io.faro.common.id.ShuffleId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of a disk's directory as the worker finds and deletes them: what an earlier run left
 * (listed at open, deleted unless the metadata store keeps them), the bytes already there, and an
 * expired shuffle's directories. Touches only names of Faro's layout ({@link FileLayout}), in case
 * faro.worker.dirs points at a directory that holds more. Runs on the disks' flushers; logs as
 * {@link Disks}.
 */
final class DiskFiles {
  private static final Logger LOG = LoggerFactory.getLogger(Disks.class);

  private static final Pattern PARTITION_FILE =
      Pattern.compile("(\\d+-\\d+|run-\\d+|index-\\d+)\\.data");
  private static final Pattern SHUFFLE_DIR = Pattern.compile("\\d+");

  private DiskFiles() {}

  /**
   * Partition files an earlier run left under {@code root} (root/app/shuffle/P-E.data). A restarted
   * worker has no record of them and cannot serve them. Nothing else is touched, in case
   * faro.worker.dirs points at a directory that holds more than Faro's files.
   */
  static List<Path> leftoverPartitionFiles(Path root) {
    try (Stream<Path> paths = Files.walk(root, 3)) {
      return paths
          .filter(
              p ->
                  root.relativize(p).getNameCount() == 3
                      && Files.isRegularFile(p)
                      && PARTITION_FILE.matcher(p.getFileName().toString()).matches()
                      && SHUFFLE_DIR.matcher(p.getParent().getFileName().toString()).matches())
          .toList();
    } catch (IOException | UncheckedIOException e) {
      LOG.warn("Cannot list the files already under {}: {}", root, e.toString());
      return List.of();
    }
  }

  static void deleteLeftovers(Disk disk, Set<Path> keep) {
    List<Path> files = disk.takeLeftovers();
    if (files.isEmpty()) {
      return;
    }
    long bytes = 0;
    int deleted = 0;
    int kept = 0;
    for (Path file : files) {
      if (keep.contains(file.toAbsolutePath().normalize())) {
        kept++;
        continue;
      }
      try {
        long size = Files.size(file);
        if (Files.deleteIfExists(file)) {
          disk.used(-size);
          bytes += size;
          deleted++;
        }
        Path shuffleDir = file.getParent();
        deleteIfEmpty(shuffleDir);
        deleteIfEmpty(shuffleDir.getParent());
      } catch (NoSuchFileException e) {
        // Gone already.
      } catch (IOException e) {
        LOG.warn("Cannot delete {} left by an earlier run: {}", file, e.toString());
      }
    }
    LOG.info(
        "Deleted {} partition files ({} bytes) an earlier run left on {} that this worker does not "
            + "serve (not recorded as committed); kept {}",
        deleted,
        bytes,
        disk,
        kept);
  }

  private static void deleteIfEmpty(Path dir) throws IOException {
    try {
      Files.deleteIfExists(dir);
    } catch (DirectoryNotEmptyException e) {
      // Other files remain (more leftovers to come, or a new shuffle's).
    }
  }

  static long existingBytes(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      return paths
          .filter(Files::isRegularFile)
          .mapToLong(
              p -> {
                try {
                  return Files.size(p);
                } catch (IOException e) {
                  return 0; // deleted meanwhile
                }
              })
          .sum();
    } catch (IOException | UncheckedIOException e) {
      LOG.warn("Cannot add up the files already under {}: {}", root, e.toString());
      return 0;
    }
  }

  static void deleteShuffleDirectory(Disk disk, ShuffleId shuffle) {
    Path shuffleDir = FileLayout.shuffleDir(disk.root(), shuffle);
    try {
      deleteRecursively(disk, shuffleDir);
      Files.deleteIfExists(FileLayout.appDir(disk.root(), shuffle.app()));
    } catch (DirectoryNotEmptyException e) {
      // Another shuffle of the same app still has files here: the app directory stays.
    } catch (IOException e) {
      LOG.warn(
          "Cannot delete the files of shuffle {} under {}: {}", shuffle, shuffleDir, e.toString());
    }
  }

  /**
   * Deletes {@code dir} and everything in it; the bytes of the files deleted leave {@code disk}'s
   * count.
   */
  private static void deleteRecursively(Disk disk, Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        try {
          long size = Files.isRegularFile(p) ? Files.size(p) : 0;
          if (Files.deleteIfExists(p)) {
            disk.used(-size);
          }
        } catch (NoSuchFileException ignored) {
          // Gone already.
        }
      }
    }
  }
}
