package io.faro.worker.partition;

import static java.util.Objects.requireNonNull;

import io.faro.common.id.PartitionKey;
import io.faro.common.id.ShuffleId;
import io.faro.worker.storage.ChunkIndex;
import io.faro.worker.storage.Disk;
import io.faro.worker.storage.Extent;
import io.faro.worker.storage.Extents;
import io.faro.worker.storage.FileLayout;
import io.faro.worker.storage.RunFile;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runs ({@link io.faro.worker.storage.RunFile}) one shuffle writes on one disk of the runs
 * layout, for the locations of one role there (primary copies, or replica copies: kept apart, so
 * that a run read forward holds only what reducers read).
 *
 * <p>The locations' writers keep their pushed parts in memory, as in the files layout, but no
 * writer flushes alone: once the parts they all hold reach faro.worker.runs.bytes (or the memory
 * budget asks for relief), one task takes every writer's parts and writes them as one run, sorted
 * by partition and epoch, each writer's parts in the order they came. A location's data is then the
 * list of its extents in the runs, in run order, which is the order its parts came in; its chunk
 * boundaries are counted in that data as before, so a replica still cuts the same chunks as its
 * primary, whatever runs each worker wrote.
 *
 * <p>Commit: the writers finishing hand their remaining parts here; with a commit or seal of the
 * whole shuffle {@link #hold held}, they all go into one last run once the last writer has handed
 * its parts over. Then (with faro.worker.commit.sync) every run not forced yet is forced, once, and
 * each location's outcome is its extents and its chunk index. A run that cannot be written fails
 * every location with parts in it: they refuse later parts (their clients move on) and their commit
 * fails, as a failed write of a file of its own does.
 *
 * <p>Over 400 lines, knowingly: writing runs, the commit's last run and the outcomes it answers all
 * use the fields below the line on one thread, without locks; split, they would need them.
 *
 * <p>Threads: {@link #added}, {@link #dropped}, {@link #finish} and {@link #hold} run on push event
 * loops and commit callers, inside writers' locks; they only count and queue. Runs are written, and
 * every field below the line is used, on one flusher thread of the disk ({@link
 * io.faro.worker.storage.DiskFlusher#threadFor(ShuffleId, int)}), so runs are written in order.
 */
final class ShuffleRuns implements LocationLayout {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleRuns.class);

  private static final Comparator<PartitionKey> ORDER =
      Comparator.comparingInt(PartitionKey::partition).thenComparingInt(PartitionKey::epoch);

  /** A writer's last parts and its chunk index, handed over at its commit or seal. */
  private record Finish(
      PartitionWriter writer,
      List<PartitionWriter.Part> parts,
      ChunkIndex chunks,
      CompletableFuture<PartitionCommit> result) {}

  /** Parts taken from a writer for a run. */
  private record Taken(PartitionWriter writer, List<PartitionWriter.Part> parts) {}

  private final ShuffleId shuffle;
  private final Disk disk;
  private final Executor thread;
  private final long runBytes;
  private final boolean sync;
  private final IntSupplier nextRun;

  private final Set<PartitionWriter> writers = ConcurrentHashMap.newKeySet();
  private final AtomicLong pending = new AtomicLong();
  private final AtomicBoolean runQueued = new AtomicBoolean();
  private final ConcurrentLinkedQueue<Finish> finishes = new ConcurrentLinkedQueue<>();
  private final AtomicInteger holds = new AtomicInteger();

  // Confined to `thread` -------------------------------------------------------------------
  private final Map<PartitionKey, List<Extent>> extents = new HashMap<>();
  // Locations with parts in a run that failed, and why.
  private final Map<PartitionKey, String> lost = new HashMap<>();
  private final Set<Path> unforced = new LinkedHashSet<>();
  // Runs whose force failed: the locations with data in them fail.
  private final Set<Path> unforceable = new HashSet<>();
  // Set by close: the shuffle expired, its directory is about to go; nothing is written after.
  private boolean closed;

  // -----------------------------------------------------------------------------------------

  /**
   * @param replicaCopies whether these runs hold replica copies (a thread of their own)
   * @param nextRun the number of the shuffle's next run (unique in the shuffle, on every disk)
   */
  ShuffleRuns(
      ShuffleId shuffle,
      Disk disk,
      boolean replicaCopies,
      WriterSettings settings,
      IntSupplier nextRun) {
    this.shuffle = requireNonNull(shuffle, "shuffle is null");
    this.disk = requireNonNull(disk, "disk is null");
    this.thread = disk.flusher().threadFor(shuffle, replicaCopies ? 1 : 0);
    this.runBytes = settings.runBytes();
    this.sync = settings.commitSync();
    this.nextRun = requireNonNull(nextRun, "nextRun is null");
  }

  Disk disk() {
    return disk;
  }

  /** A writer whose parts go into these runs. */
  void register(PartitionWriter writer) {
    writers.add(writer);
  }

  /** A writer now holds {@code bytes} more: a run is written once they all hold a run's worth. */
  @Override
  public void added(PartitionWriter writer, long bytes) {
    if (pending.addAndGet(bytes) >= runBytes) {
      queueRun();
    }
  }

  /** A writer released {@code bytes} it held (discarded). */
  @Override
  public void dropped(PartitionWriter writer, long bytes) {
    pending.addAndGet(-bytes);
  }

  /** Writes what every writer of these runs holds now, however little (memory relief). */
  @Override
  public void flushBuffered(PartitionWriter writer) {
    if (pending.get() > 0) {
      queueRun();
    }
  }

  /** Bytes the writers hold, not written yet. */
  long pendingBytes() {
    return pending.get();
  }

  /**
   * Delays the last run of the writers finishing until {@link #release}: a commit or seal of the
   * whole shuffle holds its runs while it finishes every writer, so that their last parts make one
   * run, not one per writer.
   */
  void hold() {
    holds.incrementAndGet();
  }

  /** Ends a {@link #hold}; the last one writes what the writers finished meanwhile handed over. */
  void release() {
    if (holds.decrementAndGet() == 0) {
      queueDrain();
    }
  }

  /**
   * {@code writer} finishes (commit or seal) with {@code parts} not written yet: they go into the
   * next last run, and {@code result} completes once they are written (and forced).
   */
  @Override
  public void finish(
      PartitionWriter writer,
      List<PartitionWriter.Part> parts,
      ChunkIndex chunks,
      CompletableFuture<PartitionCommit> result) {
    pending.addAndGet(-bytes(parts));
    finishes.add(new Finish(writer, parts, chunks, result));
    if (holds.get() == 0) {
      queueDrain();
    }
  }

  /** Nothing: a run holds other locations' data too, and goes with the shuffle's directory. */
  @Override
  public Optional<Deletion> deletion(PartitionWriter writer) {
    return Optional.empty();
  }

  /**
   * Stops writing runs (the shuffle expired): completes on the runs' thread once every task queued
   * before has run, so that the shuffle's directory is deleted after the last run is written, never
   * while one is.
   */
  CompletableFuture<Void> close() {
    try {
      return CompletableFuture.runAsync(() -> closed = true, thread);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.completedFuture(null);
    }
  }

  private void queueRun() {
    if (runQueued.compareAndSet(false, true)) {
      try {
        thread.execute(this::writeRun);
      } catch (RejectedExecutionException e) {
        // Shutting down: the parts stay with their writers, which release them at close.
        runQueued.set(false);
      }
    }
  }

  private void queueDrain() {
    try {
      thread.execute(this::drain);
    } catch (RejectedExecutionException e) {
      for (Finish f; (f = finishes.poll()) != null; ) {
        PartitionWriter.release(f.parts());
        f.result()
            .complete(new PartitionCommit.Failed(f.writer().key(), "worker is shutting down"));
      }
    }
  }

  /** On the thread: one run of what every writer holds. */
  private void writeRun() {
    List<PartitionWriter> sorted = new ArrayList<>(writers);
    sorted.sort(Comparator.comparing(PartitionWriter::key, ORDER));
    List<Taken> taken = new ArrayList<>();
    for (PartitionWriter writer : sorted) {
      List<PartitionWriter.Part> parts = writer.takePending();
      if (!parts.isEmpty()) {
        taken.add(new Taken(writer, parts));
        pending.addAndGet(-bytes(parts));
      }
    }
    // Only now: appends meanwhile must not queue a second run for the bytes this one took.
    runQueued.set(false);
    if (pending.get() >= runBytes) {
      queueRun();
    }
    write(taken);
  }

  /** On the thread: the last run of the writers that finished, then their outcomes. */
  private void drain() {
    List<Finish> done = new ArrayList<>();
    for (Finish f; (f = finishes.poll()) != null; ) {
      done.add(f);
    }
    if (done.isEmpty()) {
      return;
    }
    try {
      done.sort(Comparator.comparing(f -> f.writer().key(), ORDER));
      List<Taken> taken = new ArrayList<>();
      for (Finish f : done) {
        if (!f.parts().isEmpty()) {
          taken.add(new Taken(f.writer(), f.parts()));
        }
      }
      write(taken);
      if (sync) {
        forceAll();
      }
      List<PartitionCommit> outcomes = new ArrayList<>(done.size());
      List<PartitionCommit.Committed> inRuns = new ArrayList<>();
      for (Finish f : done) {
        PartitionCommit outcome = outcome(f);
        outcomes.add(outcome);
        if (outcome instanceof PartitionCommit.Committed c && c.data().inRuns()) {
          inRuns.add(c);
        }
      }
      writeIndex(inRuns);
      for (int i = 0; i < done.size(); i++) {
        done.get(i).result().complete(outcomes.get(i));
      }
    } finally {
      // Always answered, whatever failed above: a commit must never wait forever.
      for (Finish f : done) {
        f.result().complete(new PartitionCommit.Failed(f.writer().key(), "its runs failed"));
      }
    }
  }

  private PartitionCommit outcome(Finish f) {
    PartitionKey key = f.writer().key();
    List<Extent> mine = extents.remove(key);
    String why = lost.remove(key);
    if (closed) {
      why = "shuffle " + shuffle + " expired";
    }
    if (why == null && mine != null) {
      for (Extent e : mine) {
        if (unforceable.contains(e.file())) {
          why = "run " + e.file() + " could not be forced to the disk";
          break;
        }
      }
    }
    if (why == null && f.writer().writeFailedReason() != null) {
      why = f.writer().writeFailedReason();
    }
    if (why != null) {
      LOG.warn("Commit of partition {} failed: {}", key, why);
      return new PartitionCommit.Failed(key, why);
    }
    Extents data = Extents.inRuns(mine == null ? List.of() : mine);
    if (data.length() != f.chunks().dataLength()) {
      String mismatch =
          "partition "
              + key
              + " wrote "
              + data.length()
              + " bytes in runs but its chunk index ends at "
              + f.chunks().dataLength();
      LOG.warn("Commit of partition {} failed: {}", key, mismatch);
      return new PartitionCommit.Failed(key, mismatch);
    }
    return new PartitionCommit.Committed(key, data, f.chunks());
  }

  /**
   * The file {@code named} gives the shuffle's next number. A file of an earlier process of this
   * worker may still have that name (a leftover not deleted yet): the next number, then.
   */
  private Path unusedFile(IntFunction<Path> named) {
    Path file = named.apply(nextRun.getAsInt());
    for (int tries = 0; Files.exists(file) && tries < 1000; tries++) {
      file = named.apply(nextRun.getAsInt());
    }
    return file;
  }

  /** On the thread: writes {@code taken} as one run (if any) and releases the parts. */
  private void write(List<Taken> taken) {
    if (taken.isEmpty()) {
      return;
    }
    if (closed) {
      taken.forEach(t -> PartitionWriter.release(t.parts()));
      return;
    }
    Path run = unusedFile(n -> FileLayout.runFile(disk.root(), shuffle, n));
    try {
      List<List<ByteBuf>> pieces = new ArrayList<>(taken.size());
      for (Taken t : taken) {
        List<ByteBuf> buffers = new ArrayList<>(t.parts().size());
        t.parts().forEach(p -> buffers.add(p.bytes()));
        pieces.add(buffers);
      }
      List<Extent> written = RunFile.write(run, pieces, disk.accounting());
      disk.runWritten();
      for (int i = 0; i < taken.size(); i++) {
        extents
            .computeIfAbsent(taken.get(i).writer().key(), k -> new ArrayList<>())
            .add(written.get(i));
      }
      if (sync) {
        unforced.add(run);
      }
    } catch (IOException | RuntimeException e) {
      String why = e.getMessage();
      LOG.warn("Shuffle {}: {} locations stop taking data: {}", shuffle, taken.size(), why);
      disk.writeFailed(run + ": " + why);
      for (Taken t : taken) {
        lost.putIfAbsent(t.writer().key(), why);
        t.writer().stopOnWriteFailure(why);
      }
    } finally {
      taken.forEach(t -> PartitionWriter.release(t.parts()));
    }
  }

  /**
   * On the thread: writes the run index of the locations a finish committed in runs, for a worker
   * whose metadata store is lost later. Its failure costs only that: the commit goes on.
   */
  private void writeIndex(List<PartitionCommit.Committed> committed) {
    if (committed.isEmpty() || closed) {
      return;
    }
    Path index = unusedFile(n -> FileLayout.runIndexFile(disk.root(), shuffle, n));
    try {
      disk.accounting()
          .used(RunRecords.writeIndex(index, committed, disk.root(), disk.index(), sync));
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Shuffle {}: no run index {} ({}): a metadata store rebuilt from files would not find"
              + " these {} locations",
          shuffle,
          index,
          e.toString(),
          committed.size());
    }
  }

  /** On the thread: forces every run written since the last force; failures are remembered. */
  private void forceAll() {
    for (Path run : unforced) {
      try {
        RunFile.force(run);
      } catch (IOException e) {
        unforceable.add(run);
        disk.writeFailed("cannot force run " + run + ": " + e.getMessage());
      }
    }
    unforced.clear();
  }

  private static long bytes(List<PartitionWriter.Part> parts) {
    long bytes = 0;
    for (PartitionWriter.Part p : parts) {
      bytes += p.bytes().readableBytes();
    }
    return bytes;
  }
}
