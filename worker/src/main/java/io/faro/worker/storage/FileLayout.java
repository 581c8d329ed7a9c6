package io.faro.worker.storage;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where files live on a disk: {@code <disk>/<app>/<shuffle>/<partition>-<epoch>.data}. The app id
 * comes from the engine and may hold any character, so it is made safe for a file name; when that
 * changes it, a hash of the original keeps distinct apps apart.
 */
public final class FileLayout {
  private static final Pattern UNSAFE = Pattern.compile("[^A-Za-z0-9._-]");

  private FileLayout() {}

  public static Path appDir(Path diskRoot, AppId app) {
    return diskRoot.resolve(directoryName(app));
  }

  public static Path shuffleDir(Path diskRoot, ShuffleId shuffle) {
    return appDir(diskRoot, shuffle.app()).resolve(Integer.toString(shuffle.shuffle()));
  }

  public static Path partitionFile(Path diskRoot, PartitionKey key) {
    return shuffleDir(diskRoot, key.shuffle())
        .resolve(key.partition() + "-" + key.epoch() + ".data");
  }

  /** The {@code n}th run of {@code shuffle} on this disk ({@link RunFile}). */
  public static Path runFile(Path diskRoot, ShuffleId shuffle, int n) {
    return shuffleDir(diskRoot, shuffle).resolve(RUN_PREFIX + n + ".data");
  }

  /** The {@code n}th run index of {@code shuffle} on this disk (a finish's records, see runs). */
  public static Path runIndexFile(Path diskRoot, ShuffleId shuffle, int n) {
    return shuffleDir(diskRoot, shuffle).resolve("index-" + n + ".data");
  }

  private static final Pattern RUN_INDEX_FILE = Pattern.compile("index-\\d+\\.data");

  /** Whether {@code file} is named as a run index is. */
  public static boolean isRunIndex(Path file) {
    return RUN_INDEX_FILE.matcher(file.getFileName().toString()).matches();
  }

  /**
   * The shuffle whose directory (under {@code diskRoot}) holds {@code file}, read back from its
   * path {@code <app>/<shuffle>/<name>}; empty for any other path.
   */
  public static Optional<ShuffleId> shuffleOf(Path diskRoot, Path file) {
    Path relative =
        diskRoot.toAbsolutePath().normalize().relativize(file.toAbsolutePath().normalize());
    if (relative.getNameCount() != 3) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          new ShuffleId(
              new AppId(relative.getName(0).toString()),
              Integer.parseInt(relative.getName(1).toString())));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static final String RUN_PREFIX = "run-";
  private static final Pattern RUN_FILE = Pattern.compile("run-(\\d+)\\.data");

  /** The number of the run {@code file} is, from its name; -1 when it is no run. */
  public static int runNumber(Path file) {
    Matcher m = RUN_FILE.matcher(file.getFileName().toString());
    try {
      return m.matches() ? Integer.parseInt(m.group(1)) : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static final Pattern PARTITION_FILE = Pattern.compile("(\\d+)-(\\d+)\\.data");

  /**
   * The partition location {@code file} (under {@code diskRoot}) is the file of, read back from its
   * path; empty when the path is not {@code <app>/<shuffle>/<partition>-<epoch>.data}. An app
   * directory whose name was made safe (see {@link #directoryName}) reads back as that name: its
   * shuffles are then unknown to the masters, which expire them.
   */
  public static Optional<PartitionKey> parse(Path diskRoot, Path file) {
    Path relative =
        diskRoot.toAbsolutePath().normalize().relativize(file.toAbsolutePath().normalize());
    if (relative.getNameCount() != 3) {
      return Optional.empty();
    }
    Matcher m = PARTITION_FILE.matcher(relative.getName(2).toString());
    try {
      if (!m.matches()) {
        return Optional.empty();
      }
      ShuffleId shuffle =
          new ShuffleId(
              new AppId(relative.getName(0).toString()),
              Integer.parseInt(relative.getName(1).toString()));
      return Optional.of(
          new PartitionKey(shuffle, Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))));
    } catch (IllegalArgumentException e) {
      return Optional.empty(); // not an id Faro writes (or numbers out of range)
    }
  }

  /** A file-system-safe, collision-free directory name for {@code app}. */
  static String directoryName(AppId app) {
    String value = app.value();
    String safe = UNSAFE.matcher(value).replaceAll("_");
    if (safe.equals(value) && !safe.startsWith(".")) {
      return safe;
    }
    // String.hashCode is specified, so the name is the same in every JVM and after restarts.
    return "_" + safe + "-" + String.format("%08x", value.hashCode());
  }
}
