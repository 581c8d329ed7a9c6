package io.faro.worker.storage;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.common.id.DiskTier;
import io.faro.common.id.ShuffleId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The worker's disks, in {@code faro.worker.dirs} order. Owns their flushers and readers. */
public final class Disks implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Disks.class);

  private final List<Disk> disks;

  private Disks(List<Disk> disks) {
    this.disks = List.copyOf(disks);
  }

  /**
   * How the disks do their I/O.
   *
   * @param threads flusher and reader threads of each disk, by its tier
   * @param ioMode direct or buffered I/O, or direct where the file system takes it
   * @param readBufferPerDisk read buffer bytes each disk may lend to fetches
   * @param readBufferWaitMillis how long a read waits for a read buffer before it fails
   * @param layouts the layout of each tier's disks (a disk of the runs layout is written and read
   *     through the page cache whatever {@code ioMode} says, unless it says direct: refused)
   * @param readAroundBytes bytes a read of a run reads from where its piece starts (see {@link
   *     DiskReader}); 0 reads only the piece
   */
  public record Options(
      Map<DiskTier, DiskThreads> threads,
      IoMode ioMode,
      long readBufferPerDisk,
      long readBufferWaitMillis,
      Map<DiskTier, Layout> layouts,
      int readAroundBytes) {
    public Options {
      Objects.requireNonNull(ioMode, "ioMode is null");
      threads = Map.copyOf(threads);
      layouts = Map.copyOf(layouts);
      for (DiskTier tier : DiskTier.values()) {
        if (!threads.containsKey(tier) || !layouts.containsKey(tier)) {
          throw new IllegalArgumentException("no threads or no layout for tier " + tier);
        }
      }
      if (readAroundBytes < 0) {
        throw new IllegalArgumentException("readAroundBytes is negative: " + readAroundBytes);
      }
    }

    /** Every tier in the files layout. */
    public Options(
        Map<DiskTier, DiskThreads> threads,
        IoMode ioMode,
        long readBufferPerDisk,
        long readBufferWaitMillis) {
      this(threads, ioMode, readBufferPerDisk, readBufferWaitMillis, every(Layout.FILES), 0);
    }

    /** The same layout for every tier. */
    public static Map<DiskTier, Layout> every(Layout layout) {
      Map<DiskTier, Layout> all = new EnumMap<>(DiskTier.class);
      for (DiskTier tier : DiskTier.values()) {
        all.put(tier, layout);
      }
      return all;
    }

    /** The same threads for every tier. */
    public static Map<DiskTier, DiskThreads> everyTier(DiskThreads threads) {
      Map<DiskTier, DiskThreads> all = new EnumMap<>(DiskTier.class);
      for (DiskTier tier : DiskTier.values()) {
        all.put(tier, threads);
      }
      return all;
    }

    /** Buffered I/O with {@code flushThreadsPerDisk} flushers: what tests of the write path use. */
    public static Options buffered(int flushThreadsPerDisk) {
      return new Options(
          everyTier(new DiskThreads(flushThreadsPerDisk, 1)),
          IoMode.BUFFERED,
          DiskReader.SEGMENT_BYTES,
          1000);
    }
  }

  /**
   * Creates every directory, finds out whether it takes direct I/O (when {@code options} asks for
   * it), and starts each disk's flusher threads, named {@code <threadPrefix>-flusher-d<index>-N},
   * and reader threads, {@code <threadPrefix>-reader-d<index>-N}.
   *
   * <p>A directory that cannot be created (a file in its place, no permission) makes its disk
   * broken from the start, with the reason, as a failed check would: one dead disk of twelve does
   * not keep a worker down. The worker refuses to start when every disk is broken.
   *
   * @throws FaroException STORAGE_FAILED naming a directory that cannot do direct I/O when
   *     faro.worker.io.mode is direct
   */
  public static Disks open(List<DiskDir> dirs, Options options, String threadPrefix) {
    List<Disk> disks = new ArrayList<>();
    try {
      for (DiskDir dir : dirs) {
        String openFailure = createDirectory(dir.path());
        int index = disks.size();
        DiskThreads threads = options.threads().get(dir.tier());
        // A disk without its directory cannot be probed; it is written through the page cache
        // should it recover.
        Layout layout = options.layouts().get(dir.tier());
        DirectIo direct =
            openFailure == null ? directIo(dir, runsMode(dir, layout, options.ioMode())) : null;
        DiskReader reader =
            new DiskReader(
                threadPrefix + "-reader-d" + index,
                direct,
                threads.read(),
                options.readBufferPerDisk(),
                options.readBufferWaitMillis(),
                layout == Layout.RUNS ? options.readAroundBytes() : 0);
        Disk disk =
            new Disk(
                index,
                dir,
                new DiskFlusher(threadPrefix + "-flusher-d" + index, threads.flush()),
                direct,
                reader,
                layout);
        disks.add(disk);
        if (openFailure != null) {
          disk.openFailed(openFailure);
          continue;
        }
        // Files left by an earlier run count against the disk's capacity until they are deleted.
        disk.used(DiskFiles.existingBytes(dir.path()));
        disk.leftovers(DiskFiles.leftoverPartitionFiles(dir.path()));
      }
    } catch (RuntimeException e) {
      new Disks(disks).close();
      throw e;
    }
    return new Disks(disks);
  }

  /**
   * The I/O mode of a disk of {@code layout}: runs are written and read through the page cache
   * (their reads read around the piece asked for, and the pages read serve the next reducers), so a
   * runs disk is buffered under auto, and refused under direct.
   */
  private static IoMode runsMode(DiskDir dir, Layout layout, IoMode mode) {
    if (layout != Layout.RUNS) {
      return mode;
    }
    if (mode == IoMode.DIRECT) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED,
          "worker directory "
              + dir.path()
              + " is of tier "
              + dir.tier().configName()
              + ", whose layout is runs (faro.worker.tier."
              + dir.tier().configName()
              + ".layout), read and written through the page cache, but faro.worker.io.mode is"
              + " direct: set faro.worker.io.mode to auto or buffered, or the tier's layout to"
              + " files");
    }
    return IoMode.BUFFERED;
  }

  /** Creates {@code path} and its parents; returns why it cannot, or null when it exists now. */
  private static String createDirectory(Path path) {
    try {
      Files.createDirectories(path);
      return null;
    } catch (IOException e) {
      String why = DiskCondition.whyNotAWritableDirectory(path);
      return "cannot create " + path + ": " + (why.isEmpty() ? e.toString() : why);
    }
  }

  private static DirectIo directIo(DiskDir dir, IoMode mode) {
    return buffered(dir, mode) ? null : directIo(dir, mode, DirectIo.probe(dir.path()));
  }

  /** Whether {@code mode} writes {@code dir} through the page cache whatever its file system. */
  private static boolean buffered(DiskDir dir, IoMode mode) {
    return mode == IoMode.BUFFERED || (mode == IoMode.AUTO && dir.tier() != DiskTier.NVME);
  }

  /** Direct I/O for {@code dir} in {@code mode}, given what probing it found. */
  static DirectIo directIo(DiskDir dir, IoMode mode, DirectIo.Probe probe) {
    if (buffered(dir, mode)) {
      return null;
    }
    if (probe.supported()) {
      return probe.io();
    }
    if (mode == IoMode.DIRECT) {
      throw new FaroException(
          ErrorCode.STORAGE_FAILED,
          "worker directory "
              + dir.path()
              + " cannot do direct I/O (faro.worker.io.mode is direct): "
              + probe.unsupportedReason()
              + "; set faro.worker.io.mode to auto or buffered, or move the directory to a file system "
              + "that supports O_DIRECT");
    }
    LOG.info(
        "Worker directory {} is written through the page cache: {}",
        dir.path(),
        probe.unsupportedReason());
    return null;
  }

  public List<Disk> all() {
    return disks;
  }

  public int size() {
    return disks.size();
  }

  /**
   * @throws IndexOutOfBoundsException for an index not in faro.worker.dirs
   */
  public Disk get(int index) {
    return disks.get(index);
  }

  /**
   * Removes the directories of {@code shuffle} on every disk (with any file left in them), and the
   * app directory once it is empty. Runs on each disk's flusher; call it after the shuffle's
   * partition files are deleted, so no flusher writes into them any more.
   */
  public CompletableFuture<Void> deleteShuffleDirectories(ShuffleId shuffle) {
    CompletableFuture<?>[] perDisk =
        disks.stream()
            .map(
                d ->
                    CompletableFuture.runAsync(
                        () -> DiskFiles.deleteShuffleDirectory(d, shuffle),
                        d.flusher().anyThread()))
            .toArray(CompletableFuture[]::new);
    return CompletableFuture.allOf(perDisk);
  }

  /**
   * Deletes, on each disk's flusher, the partition files an earlier run left (found at open), and
   * then their shuffle and app directories if empty; their bytes leave the disks' counts.
   */
  public CompletableFuture<Void> deleteLeftovers() {
    return deleteLeftovers(Set.of());
  }

  /**
   * As {@link #deleteLeftovers()}, but keeps the files in {@code keep} (those the worker's metadata
   * store lists as committed and that passed their check: it serves them again).
   */
  public CompletableFuture<Void> deleteLeftovers(Set<Path> keep) {
    Set<Path> kept = new HashSet<>();
    keep.forEach(p -> kept.add(p.toAbsolutePath().normalize()));
    return CompletableFuture.allOf(
        disks.stream()
            .map(
                d ->
                    CompletableFuture.runAsync(
                        () -> DiskFiles.deleteLeftovers(d, kept), d.flusher().anyThread()))
            .toArray(CompletableFuture[]::new));
  }

  /** Stops every flusher after it ran its queued tasks, and every reader. */
  @Override
  public void close() {
    disks.forEach(d -> d.flusher().close());
    disks.forEach(d -> d.reader().close());
  }
}
