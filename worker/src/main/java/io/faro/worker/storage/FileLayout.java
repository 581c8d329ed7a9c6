package io.faro.worker.storage;

import io.faro.common.id.AppId;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import java.nio.file.Path;
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
