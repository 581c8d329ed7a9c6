package io.faro.worker.meta;

import io.faro.common.error.ErrorCode;
import io.faro.common.error.FaroException;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.PartitionFileReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a worker does with its metadata store at start, before it serves: opens it, rebuilds it when
 * it is new or unreadable, and checks what it lists ({@link CommittedFiles}), saying in the log
 * what it found, dropped or had to give up.
 */
public final class StartupRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(StartupRecovery.class);

  /**
   * The store to record commits in from now on (null when none could be opened), and what to serve
   * again.
   */
  public record Result(WorkerMetaStore store, CommittedFiles.Recovery recovery) {}

  private final Disks disks;
  private WorkerMetaStore meta;

  private StartupRecovery(Disks disks) {
    this.disks = disks;
  }

  /**
   * Opens the metadata store in {@code dir} (faro.worker.meta.dir) for a worker with {@code disks}
   * ({@code idHint}: its configured id, or empty), and checks what it lists (see {@link
   * CommittedFiles#recover}). A new store (a first start, or one after an upgrade from a Faro
   * without it) and one that could not be read (moved aside) are rebuilt from the trailers of the
   * committed files an earlier run left ({@link CommittedFiles#rebuild}), saying so; when not even
   * a new store can be created, the worker starts empty and runs without one.
   *
   * @throws FaroException STORAGE_FAILED for a store, or a committed partition file, written by a
   *     newer Faro: this worker must neither misread nor drop it, so it does not start
   */
  public static Result run(Path dir, String idHint, Disks disks) {
    return new StartupRecovery(disks).recover(dir, idHint);
  }

  private Result recover(Path dir, String idHint) {
    CommittedFiles.Recovery empty = new CommittedFiles.Recovery(List.of(), Set.of(), List.of());
    try {
      meta = WorkerMetaStore.open(dir, idHint);
      if (meta.createdNow()) {
        rebuild("is new");
      }
      return new Result(meta, check());
    } catch (WorkerMetaStore.NewerVersionException e) {
      throw new FaroException(ErrorCode.STORAGE_FAILED, e.getMessage(), e);
    } catch (PartitionFileReader.NewerFormatException e) {
      // Before anything is deleted: the leftovers' deletion runs after recovery. A store whose
      // rebuild stopped here has no version yet, so the next start rebuilds (and refuses) again
      // rather than take the newer files for garbage.
      closeQuietly();
      meta = null;
      throw e;
    } catch (IOException e) {
      closeQuietly();
      meta = null;
      Path aside =
          dir.resolveSibling(dir.getFileName() + ".unreadable-" + System.currentTimeMillis());
      try {
        Files.move(dir, aside);
        meta = WorkerMetaStore.open(dir, idHint);
        rebuild("could not be read (" + e.getMessage() + ") and was moved to " + aside);
        return new Result(meta, check());
      } catch (PartitionFileReader.NewerFormatException newer) {
        // As it was: the store made here goes (its directory was made after the move, so all
        // of it is this start's), and the unreadable one comes back, to be found so again.
        closeQuietly();
        meta = null;
        try {
          deleteRecursively(dir);
          Files.move(aside, dir);
        } catch (IOException e2) {
          newer.addSuppressed(e2);
        }
        throw newer;
      } catch (IOException | RuntimeException again) {
        closeQuietly();
        meta = null;
        LOG.error(
            "The metadata store in {} cannot be read ({}) nor replaced ({}): this worker starts"
                + " empty, deletes the partition files of its earlier run, and runs without a"
                + " store (a restart will not serve what it commits)",
            dir,
            e.getMessage(),
            again.toString());
        return new Result(null, empty);
      }
    }
  }

  /**
   * Records, in a store that has no records, the committed files an earlier run left; then gives
   * the store its version (see {@link WorkerMetaStore#markCurrent}).
   */
  private void rebuild(String why) throws IOException {
    int found = new CommittedFiles(meta, disks, Clock.systemUTC()).rebuild();
    meta.markCurrent();
    if (found > 0) {
      LOG.warn(
          "The metadata store in {} {}: rebuilt it from the trailers of {} committed partition"
              + " files an earlier run left (their owners are unknown; the masters expire the"
              + " shuffles they no longer know)",
          meta.dir(),
          why,
          found);
    } else if (!why.equals("is new")) {
      LOG.warn(
          "The metadata store in {} {}: no committed partition file was found to rebuild it"
              + " from; this worker starts empty",
          meta.dir(),
          why);
    }
  }

  private CommittedFiles.Recovery check() throws IOException {
    CommittedFiles.Recovery found = new CommittedFiles(meta, disks, Clock.systemUTC()).recover();
    LOG.info(
        "Metadata store {}: serving again {} committed partition locations of {} shuffles",
        meta.dir(),
        found.partitions(),
        found.shuffles().size());
    if (!found.dropped().isEmpty()) {
      LOG.warn(
          "{} committed partition locations failed their check at start and are not served "
              + "(their files are deleted; their reducers re-run the map stage if they need "
              + "them): {}",
          found.dropped().size(),
          found.dropped().size() > 20 ? found.dropped().subList(0, 20) + " ..." : found.dropped());
    }
    return found;
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private void closeQuietly() {
    if (meta != null) {
      try {
        meta.close();
      } catch (RuntimeException e) {
        LOG.warn("Closing the metadata store failed", e);
      }
    }
  }
}
