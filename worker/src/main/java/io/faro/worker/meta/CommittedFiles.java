package io.faro.worker.meta;

import static java.util.Objects.requireNonNull;

import io.faro.common.error.FaroException;
import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.common.network.NetworkThreads;
import io.faro.proto.CommittedFileRecordP;
import io.faro.worker.partition.CommitLog;
import io.faro.worker.partition.LocationKeys;
import io.faro.worker.partition.PartitionCommit;
import io.faro.worker.partition.RestoredPartition;
import io.faro.worker.partition.RunRecords;
import io.faro.worker.partition.ShuffleCommit;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.Disks;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.PartitionFileReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's committed partition files across restarts, through its {@link WorkerMetaStore}:
 * {@link #committed} writes what a commit produced (before the commit is answered); {@link
 * #recover} reads the store back at start and checks every listed file (there, its length as
 * recorded, its trailer and index intact), so that the worker serves again exactly the files that
 * pass.
 *
 * <p>What a record claims is checked against what the disk holds by {@link RecordCheck}, for
 * partition files and for runs alike; the record of a location in runs itself is built and read by
 * {@link RunRecords}.
 */
public final class CommittedFiles implements CommitLog {
  private static final Logger LOG = LoggerFactory.getLogger(CommittedFiles.class);

  /**
   * A shuffle found at start, with its owner token, the partition locations that passed and those
   * recorded with no data ({@code empty}); {@code sealed} when an earlier run sealed them on its
   * way out, before the shuffle committed.
   */
  public record RecoveredShuffle(
      ShuffleId shuffle,
      long ownerToken,
      String appNonce,
      boolean sealed,
      List<RestoredPartition> partitions,
      LocationKeys empty) {}

  /**
   * What {@link #recover} found: the shuffles to serve, the files they keep (every other partition
   * file of an earlier run is garbage), and a line per location dropped, saying why.
   */
  public record Recovery(List<RecoveredShuffle> shuffles, Set<Path> keep, List<String> dropped) {
    public int partitions() {
      return shuffles.stream().mapToInt(s -> s.partitions().size()).sum();
    }
  }

  private final WorkerMetaStore store;
  private final Disks disks;
  private final Clock clock;
  private final boolean sync;
  private final RecordCheck check;

  /** A log whose records are forced to the disk (at start: a rebuild, a check). */
  public CommittedFiles(WorkerMetaStore store, Disks disks, Clock clock) {
    this(store, disks, clock, true);
  }

  /**
   * @param sync whether each record of a commit or seal is forced to the disk before the commit
   *     answers: faro.worker.commit.sync, as the files it lists are
   */
  public CommittedFiles(WorkerMetaStore store, Disks disks, Clock clock, boolean sync) {
    this.store = requireNonNull(store, "store is null");
    this.disks = requireNonNull(disks, "disks is null");
    this.clock = requireNonNull(clock, "clock is null");
    this.sync = sync;
    this.check = new RecordCheck(disks);
  }

  /**
   * Records the partitions {@code commit} committed. A location whose file lies on no disk of this
   * worker (not expected) is left out, and so is not served after a restart.
   */
  @Override
  public void committed(ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit commit)
      throws IOException {
    assert !NetworkThreads.isCurrent() : "a commit recorded on an event loop";
    store.committed(
        shuffle,
        ownerToken,
        appNonce,
        clock.millis(),
        records(commit),
        commit.empty().toArray(),
        sync);
  }

  /** Records the partitions a graceful stop (or a drain) sealed while the shuffle was pushed. */
  @Override
  public void sealed(ShuffleId shuffle, long ownerToken, String appNonce, ShuffleCommit sealed)
      throws IOException {
    assert !NetworkThreads.isCurrent() : "a seal recorded on an event loop";
    store.sealed(
        shuffle,
        ownerToken,
        appNonce,
        clock.millis(),
        records(sealed),
        sealed.empty().toArray(),
        sync);
  }

  private Map<PartitionKey, CommittedFileRecordP> records(ShuffleCommit commit) throws IOException {
    Map<PartitionKey, CommittedFileRecordP> records = new LinkedHashMap<>();
    for (PartitionCommit.Committed c : commit.committed()) {
      if (c.data().inRuns()) {
        runs(c).ifPresent(record -> records.put(c.key(), record));
        continue;
      }
      CommittedFileRecordP.Builder r = RunRecords.of(c.chunks());
      if (c.file().isPresent()) {
        Path file = c.file().get();
        Optional<Disk> disk = diskOf(file);
        if (disk.isEmpty()) {
          LOG.warn(
              "Partition {} has its file {} on no disk of this worker: not recorded",
              c.key(),
              file);
          continue;
        }
        r.setDiskIndex(disk.get().index())
            .setPath(disk.get().root().relativize(file).toString())
            .setFileLength(Files.size(file));
      }
      records.put(c.key(), r.build());
    }
    return records;
  }

  /**
   * The record of a location in runs; empty (and logged) when its runs lie on no disk of this
   * worker or are not named as runs are.
   */
  private Optional<CommittedFileRecordP> runs(PartitionCommit.Committed c) {
    Optional<Disk> disk = diskOf(c.data().list().get(0).file());
    try {
      return Optional.of(
          RunRecords.record(c, disk.orElseThrow().root(), disk.orElseThrow().index()));
    } catch (IllegalArgumentException | NoSuchElementException e) {
      LOG.warn("Partition {} is not recorded: {}", c.key(), e.getMessage());
      return Optional.empty();
    }
  }

  /** Forgets an expired shuffle. */
  @Override
  public void forgotten(ShuffleId shuffle) throws IOException {
    assert !NetworkThreads.isCurrent() : "a shuffle forgotten on an event loop";
    store.forget(shuffle);
  }

  private Optional<Disk> diskOf(Path file) {
    return disks.all().stream().filter(d -> file.startsWith(d.root())).findFirst();
  }

  /**
   * Reads the store and checks each listed file. A location passes when its disk exists, and its
   * file (for a non-empty partition) is where recorded, as long as recorded, and has a valid
   * trailer and index with the recorded chunk count and data length. A location that fails is
   * forgotten, and its file is not kept (the leftovers of the earlier run are deleted next); each
   * is named in {@link Recovery#dropped}.
   *
   * @throws PartitionFileReader.NewerFormatException for a file a newer Faro wrote: the worker must
   *     neither serve nor delete it
   */
  public Recovery recover() throws IOException {
    List<RecoveredShuffle> shuffles = new ArrayList<>();
    Set<Path> keep = new HashSet<>();
    // Directories of runs whose indexes are kept already: listed once, not once per location.
    Set<Path> runDirs = new HashSet<>();
    List<String> dropped = new ArrayList<>();
    for (WorkerMetaStore.StoredShuffle stored : store.shuffles()) {
      List<RestoredPartition> good = new ArrayList<>();
      for (Map.Entry<PartitionKey, CommittedFileRecordP> e : stored.partitions().entrySet()) {
        PartitionKey key = e.getKey();
        CommittedFileRecordP r = e.getValue();
        try {
          if (r.getExtentRunsCount() > 0) {
            PartitionCommit.Committed inRuns = check.checkedRuns(key, r);
            keep.addAll(inRuns.data().files());
            // checkedRuns made every extent (one at least) a run in this shuffle's directory.
            Path runDir = inRuns.data().list().get(0).file().getParent();
            if (runDirs.add(runDir)) {
              keep.addAll(runIndexes(runDir));
            }
            good.add(new RestoredPartition(r.getDiskIndex(), inRuns));
            continue;
          }
          ChunkIndex chunks = check.checked(r);
          Optional<Path> file = check.file(r);
          file.ifPresent(keep::add);
          good.add(
              new RestoredPartition(
                  r.getDiskIndex(), new PartitionCommit.Committed(key, file, chunks)));
        } catch (RecordCheck.Unservable u) {
          dropped.add("partition " + key + ": " + u.getMessage());
          store.forget(key);
          // Not kept: deleted with the other leftovers of the earlier run (and uncounted).
        }
      }
      shuffles.add(
          new RecoveredShuffle(
              stored.shuffle(),
              stored.ownerToken(),
              stored.appNonce(),
              stored.sealed(),
              good,
              LocationKeys.of(stored.emptyLocations())));
    }
    return new Recovery(shuffles, keep, dropped);
  }

  /**
   * Records, as committed, every partition file an earlier run left whose trailer and index are
   * whole (a file gets them only when its shuffle commits): for a store that was lost, or one that
   * never existed (a worker upgraded from a Faro without it). Files without them (data of a shuffle
   * that never committed here) are left out, and deleted with the other leftovers. Their owner is
   * unknown (any lifecycle manager's commit is answered); the masters expire the shuffles they no
   * longer know. Returns how many locations it recorded.
   */
  public int rebuild() throws IOException {
    Map<ShuffleId, List<PartitionCommit.Committed>> found = new LinkedHashMap<>();
    for (Disk disk : disks.all()) {
      for (Path file : disk.leftoverFiles()) {
        if (FileLayout.isRunIndex(file)) {
          rebuildRuns(disk, file, found);
          continue;
        }
        Optional<PartitionKey> key = FileLayout.parse(disk.root(), file);
        if (key.isEmpty()) {
          continue;
        }
        try {
          ChunkIndex chunks = PartitionFileReader.readIndex(file);
          found
              .computeIfAbsent(key.get().shuffle(), s -> new ArrayList<>())
              .add(new PartitionCommit.Committed(key.get(), Optional.of(file), chunks));
        } catch (PartitionFileReader.NewerFormatException e) {
          throw e; // a newer Faro's committed file: neither misread nor deleted
        } catch (FaroException e) {
          // No whole trailer: never committed.
        }
      }
    }
    int recorded = 0;
    for (Map.Entry<ShuffleId, List<PartitionCommit.Committed>> e : found.entrySet()) {
      // Neither owner nor app registration is known of a rebuilt record.
      committed(e.getKey(), 0, "", new ShuffleCommit(e.getValue(), List.of()));
      recorded += e.getValue().size();
    }
    return recorded;
  }

  /** The run indexes in the runs' directory {@code dir}, kept with them for a later rebuild. */
  private static List<Path> runIndexes(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(FileLayout::isRunIndex).toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  /**
   * Adds to {@code found} the locations the run index {@code file} lists whose runs pass every
   * check of {@link RecordCheck#checkedRuns}; a damaged index, or a location that fails, is left
   * out.
   */
  private void rebuildRuns(
      Disk disk, Path file, Map<ShuffleId, List<PartitionCommit.Committed>> found) {
    Optional<ShuffleId> shuffle = FileLayout.shuffleOf(disk.root(), file);
    if (shuffle.isEmpty()) {
      return;
    }
    Map<PartitionKey, CommittedFileRecordP> records;
    FileTime written;
    try {
      records = RunRecords.readIndex(file, shuffle.get());
      written = Files.getLastModifiedTime(file);
    } catch (IOException e) {
      LOG.warn("Run index {} is not read: {}", file, e.getMessage());
      return;
    }
    for (Map.Entry<PartitionKey, CommittedFileRecordP> e : records.entrySet()) {
      if (e.getValue().getDiskIndex() != disk.index()) {
        continue; // not an index of this disk's runs (moved?): never served from another disk
      }
      try {
        // An index is written after the runs it lists, which are never written again. A run
        // newer than the index is another run of the same name (the one listed was deleted,
        // dropped at a start, and its number taken again): never served as the one listed.
        for (int run : e.getValue().getExtentRunsList()) {
          Path runFile = FileLayout.runFile(disk.root(), shuffle.get(), run);
          if (Files.exists(runFile) && Files.getLastModifiedTime(runFile).compareTo(written) > 0) {
            throw new RecordCheck.Unservable(
                runFile + " was written after the index that lists it");
          }
        }
        found
            .computeIfAbsent(shuffle.get(), s -> new ArrayList<>())
            .add(check.checkedRuns(e.getKey(), e.getValue()));
      } catch (RecordCheck.Unservable | IOException u) {
        LOG.warn(
            "Partition {} of run index {} is not served: {}", e.getKey(), file, u.getMessage());
      }
    }
  }
}
