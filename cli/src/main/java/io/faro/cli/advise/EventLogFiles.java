package io.faro.cli.advise;

import com.github.luben.zstd.ZstdInputStream;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import net.jpountz.lz4.LZ4BlockInputStream;

/**
 * Finds Spark event logs and opens them as Spark wrote them: one file per application ({@code
 * APP_ID[.CODEC][.inprogress]}), or a rolling log, a directory {@code eventlog_v2_APP_ID} of {@code
 * events_N_APP_ID[.CODEC]} files read in the order of N. Plain, lz4 (Spark's lz4 block stream) and
 * zstd; snappy and lzf are named as unsupported. Files Spark's file system writes beside them
 * ({@code .crc}, hidden files) and the rolling log's {@code appstatus_} marker are skipped.
 */
final class EventLogFiles {
  private static final String ROLLING = "eventlog_v2_";

  private EventLogFiles() {}

  /** One application's log: a name to report and its files in reading order. */
  record Log(String name, List<Path> files) {}

  /**
   * The logs at {@code path}: a log file, a rolling log directory, or a directory of either.
   *
   * @throws IOException when {@code path} does not exist or cannot be listed
   */
  static List<Log> find(Path path) throws IOException {
    if (!Files.exists(path)) {
      throw new IOException("no such file or directory: " + path);
    }
    if (Files.isRegularFile(path)) {
      return List.of(new Log(path.getFileName().toString(), List.of(path)));
    }
    if (path.getFileName() != null && path.getFileName().toString().startsWith(ROLLING)) {
      return List.of(rolling(path));
    }
    List<Log> logs = new ArrayList<>();
    try (Stream<Path> children = Files.list(path)) {
      for (Path child : children.sorted().toList()) {
        String name = child.getFileName().toString();
        if (name.startsWith(".") || name.endsWith(".crc")) {
          continue;
        }
        if (Files.isDirectory(child)) {
          if (name.startsWith(ROLLING)) {
            logs.add(rolling(child));
          }
        } else if (Files.isRegularFile(child)) {
          logs.add(new Log(name, List.of(child)));
        }
      }
    }
    return logs;
  }

  private static Log rolling(Path dir) throws IOException {
    List<Path> parts;
    try (Stream<Path> children = Files.list(dir)) {
      parts =
          children
              .filter(p -> p.getFileName().toString().startsWith("events_"))
              .sorted(Comparator.comparingLong(EventLogFiles::rollingIndex))
              .toList();
    }
    return new Log(dir.getFileName().toString().substring(ROLLING.length()), parts);
  }

  /** N of {@code events_N_APP_ID...}; files that do not say come last. */
  private static long rollingIndex(Path part) {
    String[] pieces = part.getFileName().toString().split("_", 3);
    try {
      return Long.parseLong(pieces[1]);
    } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
      return Long.MAX_VALUE;
    }
  }

  /**
   * Opens {@code file} decompressed, by its name's codec suffix.
   *
   * @throws IOException when it cannot be opened or its codec is not supported
   */
  static InputStream open(Path file) throws IOException {
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    for (String suffix : new String[] {".inprogress", ".compact"}) {
      if (name.endsWith(suffix)) {
        name = name.substring(0, name.length() - suffix.length());
      }
    }
    String codec = name.contains(".") ? name.substring(name.lastIndexOf('.') + 1) : "";
    InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
    try {
      return switch (codec) {
        // Spark's lz4 codec writes lz4-java block streams, concatenated when a log is appended.
        case "lz4" -> new LZ4BlockInputStream(in, false);
        // Continuous: a log still being written ends in a partial frame; read what is whole.
        case "zstd", "zst" -> new ZstdInputStream(in).setContinuous(true);
        case "snappy", "lzf" ->
            throw new IOException(
                file
                    + " is compressed with "
                    + codec
                    + ", which advise cannot read; it reads plain, lz4 and zstd event logs"
                    + " (spark.eventLog.compression.codec)");
        default -> in;
      };
    } catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
  }
}
